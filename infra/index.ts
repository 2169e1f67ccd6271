/** The sendtime program (Pulumi.yaml main: infra/). */
export * from "./sendtime";
