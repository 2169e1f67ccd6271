/**
 * The sendtime-guard policy pack: `pulumi preview --policy-pack policy --policy-pack-config policy/config/<env>.json`.
 * Constructing the pack starts the analyzer gRPC server, so nothing but the CLI (or scripts/preview.ts) loads this file.
 */
import { PolicyPack } from "@pulumi/policy";
import { PACK_NAME, policies } from "./policies";

new PolicyPack(PACK_NAME, { policies });
