import {
  passRoleOnlyTargetRoles,
  passRoleOnlyToScheduler,
  schedulerActionsScopedToCampaigns,
  schedulerRoleTrust,
  sesSendScoped,
} from "../../policy/iam";
import {
  assertHasResourceViolation,
  assertHasStackViolation,
  assertNoResourceViolations,
  assertNoStackViolations,
  doc,
  resourceArgs,
  stackResource,
} from "./util";

const ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy";
const SCHEDULES = "arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-*/*";
const GROUPS = "arn:aws:scheduler:us-east-1:123456789012:schedule-group/campaign-*";
const TARGET_ROLE = "arn:aws:iam::123456789012:role/scheduler-target-role-1589d4b";
const allow = (Action: unknown, Resource: unknown, extra: object = {}) => ({
  Effect: "Allow",
  Action,
  Resource,
  ...extra,
});
const rolePolicy = (...statements: object[]) =>
  resourceArgs(ROLE_POLICY, { role: "r", policy: doc(...statements) }, {}, "fanout-permissions");

describe("policy: scheduler-actions-scoped-to-campaigns", () => {
  const p = schedulerActionsScopedToCampaigns;
  it("passes campaign schedules and groups", () =>
    assertNoResourceViolations(
      p,
      rolePolicy(
        allow("scheduler:CreateSchedule", SCHEDULES),
        allow(["scheduler:CreateScheduleGroup", "scheduler:TagResource"], GROUPS),
      ),
    ));
  it("passes statements that grant no Scheduler action", () =>
    assertNoResourceViolations(p, rolePolicy(allow("logs:CreateLogDelivery", "*"))));
  it('fails Resource "*"', () =>
    assertHasResourceViolation(p, rolePolicy(allow("scheduler:CreateSchedule", "*")), {
      message: 'allows scheduler:CreateSchedule on "*", outside campaign schedules',
    }));
  for (const action of ["scheduler:*", "scheduler:Create*", "*", "SCHEDULER:createschedule"]) {
    it(`fails the wildcard action ${action} on every schedule`, () =>
      assertHasResourceViolation(
        p,
        rolePolicy(allow(action, "arn:aws:scheduler:us-east-1:123456789012:schedule/*/*")),
        {
          message: /outside campaign schedules/,
        },
      ));
  }
  it("fails a mix of good and bad ARNs, naming the bad one", () =>
    assertHasResourceViolation(
      p,
      rolePolicy(
        allow("scheduler:CreateSchedule", [SCHEDULES, "arn:aws:scheduler:us-east-1:123456789012:schedule/default/*"]),
      ),
      {
        message: 'on "arn:aws:scheduler:us-east-1:123456789012:schedule/default/*"',
      },
    ));
  it("fails another prefix", () =>
    assertHasResourceViolation(
      p,
      rolePolicy(allow("scheduler:CreateSchedule", "arn:aws:scheduler:us-east-1:123456789012:schedule/promo-*/*")),
      { message: /outside campaign schedules/ },
    ));
  it("fails a wildcard before the prefix is complete", () =>
    assertHasResourceViolation(
      p,
      rolePolicy(
        allow("scheduler:CreateScheduleGroup", "arn:aws:scheduler:us-east-1:123456789012:schedule-group/camp*"),
      ),
      { message: /outside campaign schedules/ },
    ));
  it("fails NotResource", () =>
    assertHasResourceViolation(
      p,
      rolePolicy({ Effect: "Allow", Action: "scheduler:DeleteSchedule", NotResource: SCHEDULES }),
      {
        message: "with NotResource",
      },
    ));
  it("fails NotAction (it allows Scheduler actions by omission)", () =>
    assertHasResourceViolation(p, rolePolicy({ Effect: "Allow", NotAction: "iam:*", Resource: "*" }), {
      message: "uses NotAction and so allows 12 Scheduler actions",
    }));
  it("ignores Deny statements", () =>
    assertNoResourceViolations(p, rolePolicy({ Effect: "Deny", Action: "scheduler:*", Resource: "*" })));
  it("checks managed policies (aws.iam.Policy)", () =>
    assertHasResourceViolation(
      p,
      resourceArgs("aws:iam/policy:Policy", { policy: doc(allow("scheduler:*", "*")) }, {}, "ops"),
      {
        message: 'Policy "ops" statement 1 allows',
      },
    ));
  it("checks inline policies of a Role", () =>
    assertHasResourceViolation(
      p,
      resourceArgs(
        "aws:iam/role:Role",
        { inlinePolicies: [{ name: "inline", policy: doc(allow("scheduler:*", "*")) }] },
        {},
        "r",
      ),
      {
        message: 'Role "r" inline policy "inline" statement 1',
      },
    ));
  it("fails attaching AWS's full-access Scheduler policy", () =>
    assertHasResourceViolation(
      p,
      resourceArgs("aws:iam/rolePolicyAttachment:RolePolicyAttachment", {
        role: "r",
        policyArn: "arn:aws:iam::aws:policy/AmazonEventBridgeSchedulerFullAccess",
      }),
      {
        message: "attaches arn:aws:iam::aws:policy/AmazonEventBridgeSchedulerFullAccess",
      },
    ));
  it("skips a document that is not known yet (preview of a new stack)", () =>
    assertNoResourceViolations(p, resourceArgs(ROLE_POLICY, { role: "r" })));
});

describe("policy: passrole-only-to-scheduler", () => {
  const p = passRoleOnlyToScheduler;
  const toScheduler = { Condition: { StringEquals: { "iam:PassedToService": "scheduler.amazonaws.com" } } };
  it("passes a named role passed only to Scheduler", () =>
    assertNoResourceViolations(p, rolePolicy(allow("iam:PassRole", TARGET_ROLE, toScheduler))));
  it('fails Resource "*"', () =>
    assertHasResourceViolation(p, rolePolicy(allow("iam:PassRole", "*", toScheduler)), {
      message: 'allows iam:PassRole on "*": name the role ARNs',
    }));
  it("fails a wildcard role name", () =>
    assertHasResourceViolation(p, rolePolicy(allow("iam:PassRole", "arn:aws:iam::123456789012:role/*", toScheduler)), {
      message: "never a wildcard",
    }));
  for (const action of ["iam:*", "*", "iam:Pass*"]) {
    it(`fails ${action} without the condition`, () =>
      assertHasResourceViolation(p, rolePolicy(allow(action, TARGET_ROLE)), {
        message: "without an iam:PassedToService condition",
      }));
  }
  it("fails a missing PassedToService", () =>
    assertHasResourceViolation(p, rolePolicy(allow("iam:PassRole", TARGET_ROLE)), {
      message: 'add Condition {"StringEquals": {"iam:PassedToService": "scheduler.amazonaws.com"}}',
    }));
  it("fails a wrong PassedToService", () =>
    assertHasResourceViolation(
      p,
      rolePolicy(
        allow("iam:PassRole", TARGET_ROLE, {
          Condition: { StringEquals: { "iam:PassedToService": ["scheduler.amazonaws.com", "lambda.amazonaws.com"] } },
        }),
      ),
      {
        message: 'to "scheduler.amazonaws.com", "lambda.amazonaws.com"',
      },
    ));
  it("fails PassedToService under StringLike (only StringEquals pins the service)", () =>
    assertHasResourceViolation(
      p,
      rolePolicy(allow("iam:PassRole", TARGET_ROLE, { Condition: { StringLike: { "iam:PassedToService": "*" } } })),
      { message: "without an iam:PassedToService condition" },
    ));
});

describe("policy: scheduler-role-trust", () => {
  const p = schedulerRoleTrust;
  const role = (...statements: object[]) =>
    resourceArgs("aws:iam/role:Role", { assumeRolePolicy: doc(...statements) }, {}, "scheduler-target-role");
  const trust = (Principal: unknown, extra: object = {}) => ({
    Effect: "Allow",
    Action: "sts:AssumeRole",
    Principal,
    ...extra,
  });
  const fromAccount = { Condition: { StringEquals: { "aws:SourceAccount": "123456789012" } } };
  it("passes scheduler.amazonaws.com with aws:SourceAccount", () =>
    assertNoResourceViolations(p, role(trust({ Service: "scheduler.amazonaws.com" }, fromAccount))));
  it("passes aws:SourceArn under ArnLike", () =>
    assertNoResourceViolations(
      p,
      role(
        trust(
          { Service: "scheduler.amazonaws.com" },
          {
            Condition: {
              ArnLike: { "aws:SourceArn": "arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-*/*" },
            },
          },
        ),
      ),
    ));
  it("fails trust without SourceAccount or SourceArn", () =>
    assertHasResourceViolation(p, role(trust({ Service: "scheduler.amazonaws.com" })), {
      message: "trusts scheduler.amazonaws.com from any account",
    }));
  it("fails a second service in the same principal", () =>
    assertHasResourceViolation(
      p,
      role(trust({ Service: ["scheduler.amazonaws.com", "lambda.amazonaws.com"] }, fromAccount)),
      {
        message: 'trust only {"Service": "scheduler.amazonaws.com"}',
      },
    ));
  it("fails another principal trusted beside Scheduler", () =>
    assertHasResourceViolation(
      p,
      role(trust({ Service: "scheduler.amazonaws.com" }, fromAccount), trust({ AWS: "*" })),
      {
        message: 'lets {"AWS":"*"} assume the role Scheduler uses',
      },
    ));
  it("ignores roles Scheduler does not assume", () =>
    assertNoResourceViolations(p, role(trust({ Service: "states.amazonaws.com" }))));
});

describe("policy: ses-send-scoped", () => {
  const p = sesSendScoped;
  const identity = "arn:aws:ses:us-east-1:123456789012:identity/mail.example.com";
  it("passes identity, configuration set, template and contact list ARNs", () =>
    assertNoResourceViolations(
      p,
      rolePolicy(
        allow("ses:SendEmail", [
          identity,
          "arn:aws:ses:us-east-1:123456789012:configuration-set/sendtime-dev",
          "arn:aws:ses:us-east-1:123456789012:template/*",
          "arn:aws:ses:us-east-1:123456789012:contact-list/news",
        ]),
      ),
    ));
  it('fails Resource "*"', () =>
    assertHasResourceViolation(p, rolePolicy(allow("ses:SendEmail", "*")), { message: 'allows ses:SendEmail on "*"' }));
  for (const action of ["ses:*", "ses:Send*", "*"]) {
    it(`fails ${action} on "*"`, () =>
      assertHasResourceViolation(p, rolePolicy(allow(action, "*")), {
        message: "allows ses:SendEmail, ses:SendTemplatedEmail on",
      }));
  }
  it("fails SendTemplatedEmail on a mix with a wildcard ARN", () =>
    assertHasResourceViolation(
      p,
      rolePolicy(allow("ses:SendTemplatedEmail", [identity, "arn:aws:ses:us-east-1:123456789012:*"])),
      {
        message: '"arn:aws:ses:us-east-1:123456789012:*"',
      },
    ));
  it("fails NotResource", () =>
    assertHasResourceViolation(p, rolePolicy({ Effect: "Allow", Action: "ses:SendEmail", NotResource: identity }), {
      message: "with NotResource",
    }));
});

describe("policy: scheduler-role-trust, conditions that match anything (issue 23)", () => {
  const p = schedulerRoleTrust;
  const role = (Condition: object) =>
    resourceArgs(
      "aws:iam/role:Role",
      {
        assumeRolePolicy: doc({
          Effect: "Allow",
          Action: "sts:AssumeRole",
          Principal: { Service: "scheduler.amazonaws.com" },
          Condition,
        }),
      },
      {},
      "scheduler-target-role",
    );
  for (const value of ["*", "?*", "12345678901*", "????????????"]) {
    it(`fails StringLike aws:SourceAccount ${JSON.stringify(value)}`, () =>
      assertHasResourceViolation(p, role({ StringLike: { "aws:SourceAccount": value } }), {
        message: `aws:SourceAccount ${JSON.stringify(value)} does not pin one account: use {"StringEquals": {"aws:SourceAccount": "<your 12-digit account id>"}}`,
      }));
  }
  it('fails StringEquals aws:SourceAccount "*" (not an account id)', () =>
    assertHasResourceViolation(p, role({ StringEquals: { "aws:SourceAccount": "*" } }), {
      message: 'aws:SourceAccount "*" does not pin',
    }));
  it("fails one wildcard among the accounts (any of them is enough)", () =>
    assertHasResourceViolation(p, role({ StringLike: { "aws:SourceAccount": ["123456789012", "*"] } }), {
      message: 'aws:SourceAccount "*" does not pin',
    }));
  for (const arn of [
    "arn:aws:scheduler:*:*:*",
    "arn:aws:scheduler:us-east-1:*:schedule/campaign-*/*",
    "*",
    "arn:aws:scheduler:*:1234567890?2:*",
  ]) {
    it(`fails ArnLike aws:SourceArn ${arn} (account not pinned)`, () =>
      assertHasResourceViolation(p, role({ ArnLike: { "aws:SourceArn": arn } }), {
        message: `aws:SourceArn "${arn}" does not pin one account`,
      }));
  }
  it("fails StringLike aws:SourceArn with the account wildcarded", () =>
    assertHasResourceViolation(
      p,
      role({ StringLike: { "aws:SourceArn": "arn:aws:scheduler:us-east-1:*:schedule/*" } }),
      {
        message: "does not pin one account",
      },
    ));
  it("passes aws:SourceArn with the account pinned and the region wildcarded", () =>
    assertNoResourceViolations(
      p,
      role({ ArnLike: { "aws:SourceArn": "arn:aws:scheduler:*:123456789012:schedule/campaign-*/*" } }),
    ));
  it("passes a pinned aws:SourceAccount beside a wildcard aws:SourceArn (conditions all hold at once)", () =>
    assertNoResourceViolations(
      p,
      role({
        StringEquals: { "aws:SourceAccount": "123456789012" },
        ArnLike: { "aws:SourceArn": "arn:aws:scheduler:*:*:*" },
      }),
    ));
  it("fails StringEquals aws:SourceAccount naming two accounts (either may assume the role)", () =>
    assertHasResourceViolation(p, role({ StringEquals: { "aws:SourceAccount": ["123456789012", "999999999999"] } }), {
      message:
        'aws:SourceAccount names 2 accounts ("123456789012", "999999999999"): pin one, use {"StringEquals": {"aws:SourceAccount": "<your 12-digit account id>"}}',
    }));
  it("fails ArnLike aws:SourceArn with two accounts", () =>
    assertHasResourceViolation(
      p,
      role({
        ArnLike: {
          "aws:SourceArn": [
            "arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-*/*",
            "arn:aws:scheduler:us-east-1:999999999999:schedule/*",
          ],
        },
      }),
      { message: 'aws:SourceArn names 2 accounts ("123456789012", "999999999999"): pin one' },
    ));
  it("passes aws:SourceArn listing two ARNs of one account", () =>
    assertNoResourceViolations(
      p,
      role({
        ArnLike: {
          "aws:SourceArn": [
            "arn:aws:scheduler:us-east-1:123456789012:schedule/campaign-a/*",
            "arn:aws:scheduler:eu-west-1:123456789012:schedule/*",
          ],
        },
      }),
    ));
  it("passes two accounts in aws:SourceArn beside one pinned aws:SourceAccount (conditions all hold at once)", () =>
    assertNoResourceViolations(
      p,
      role({
        StringEquals: { "aws:SourceAccount": "123456789012" },
        ArnLike: { "aws:SourceArn": ["arn:aws:scheduler:*:123456789012:*", "arn:aws:scheduler:*:999999999999:*"] },
      }),
    ));
  it("fails ...IfExists operators (a request without the key passes them)", () =>
    assertHasResourceViolation(p, role({ StringEqualsIfExists: { "aws:SourceAccount": "123456789012" } }), {
      message: "trusts scheduler.amazonaws.com from any account",
    }));
});

describe("policy: ses-send-scoped, wildcard identities (issue 23)", () => {
  const p = sesSendScoped;
  const ses = "arn:aws:ses:us-east-1:123456789012";
  const named = [`${ses}:identity/mail.example.com`, `${ses}:configuration-set/sendtime-dev`, `${ses}:template/*`];
  for (const wild of [`${ses}:identity/*`, `${ses}:identity/*.example.com`, `${ses}:identity/mail.example.co?`]) {
    it(`fails ses:SendEmail on ${wild.split(":").pop()}`, () =>
      assertHasResourceViolation(p, rolePolicy(allow("ses:SendEmail", [...named, wild])), {
        message: `allows ses:SendEmail on "${wild}": name the identity`,
      }));
  }
  it("fails a wildcard configuration set (sends could skip the stack's event tracking)", () =>
    assertHasResourceViolation(p, rolePolicy(allow("ses:SendEmail", [named[0], `${ses}:configuration-set/*`])), {
      message: `allows ses:SendEmail on "${ses}:configuration-set/*"`,
    }));
  for (const action of ["ses:SendBulkEmail", "ses:SendRawEmail", "ses:SendTemplatedEmail"]) {
    it(`fails ${action} on identity/*`, () =>
      assertHasResourceViolation(p, rolePolicy(allow(action, `${ses}:identity/*`)), {
        message: `allows ${action} on "${ses}:identity/*"`,
      }));
  }
});

describe("policy: passrole-only-target-roles (issue 23)", () => {
  const p = passRoleOnlyTargetRoles;
  const TARGET = "arn:aws:iam::123456789012:role/scheduler-target-role-1589d4b";
  const targetRole = (arn: string | undefined = TARGET) =>
    stackResource("aws:iam/role:Role", "scheduler-target-role", {
      name: "scheduler-target-role-1589d4b",
      arn,
      assumeRolePolicy: doc({
        Effect: "Allow",
        Principal: { Service: "scheduler.amazonaws.com" },
        Action: "sts:AssumeRole",
        Condition: { StringEquals: { "aws:SourceAccount": "123456789012" } },
      }),
    });
  const toScheduler = { Condition: { StringEquals: { "iam:PassedToService": "scheduler.amazonaws.com" } } };
  const passing = (...roles: string[]) =>
    stackResource("aws:iam/rolePolicy:RolePolicy", "fanout-permissions", {
      role: "fanout-role-cc741ce",
      policy: doc(allow("iam:PassRole", roles, toScheduler)),
    });
  it("passes PassRole of the stack's target role", () => assertNoStackViolations(p, [targetRole(), passing(TARGET)]));
  it("fails the target role plus another role (a schedule could run as Admin), naming it", () =>
    assertHasStackViolation(p, [targetRole(), passing(TARGET, "arn:aws:iam::123456789012:role/Admin")], {
      message:
        'RolePolicy "fanout-permissions" statement 1 allows iam:PassRole on "arn:aws:iam::123456789012:role/Admin", which is not a role of this stack that Scheduler assumes (scheduler-target-role-1589d4b): pass only the target role\'s ARN',
      urn: "urn:pulumi:test::sendtime::aws:iam/rolePolicy:RolePolicy::fanout-permissions",
    }));
  it("fails a role of the same name in another account", () =>
    assertHasStackViolation(
      p,
      [targetRole(), passing("arn:aws:iam::999999999999:role/scheduler-target-role-1589d4b")],
      {
        message: 'on "arn:aws:iam::999999999999:role/scheduler-target-role-1589d4b"',
      },
    ));
  it("fails PassRole of a stack role that Scheduler does not assume (the fan-out's own)", () =>
    assertHasStackViolation(
      p,
      [
        targetRole(),
        stackResource("aws:iam/role:Role", "fanout-role", {
          name: "fanout-role-cc741ce",
          arn: "arn:aws:iam::123456789012:role/fanout-role-cc741ce",
          assumeRolePolicy: doc({
            Effect: "Allow",
            Principal: { Service: "states.amazonaws.com" },
            Action: "sts:AssumeRole",
          }),
        }),
        passing("arn:aws:iam::123456789012:role/fanout-role-cc741ce"),
      ],
      {
        message:
          'on "arn:aws:iam::123456789012:role/fanout-role-cc741ce", which is not a role of this stack that Scheduler assumes',
      },
    ));
  it("matches the target role by name while its ARN is not known (preview)", async () => {
    await assertNoStackViolations(p, [targetRole(undefined), passing(TARGET)]);
    await assertHasStackViolation(p, [targetRole(undefined), passing("arn:aws:iam::123456789012:role/Admin")], {
      message: "role/Admin",
    });
  });
  it("fails PassRole when no role of the stack trusts Scheduler", () =>
    assertHasStackViolation(p, [passing(TARGET)], {
      message: "which is not a role of this stack that Scheduler assumes (none)",
    }));
  it("checks Role inline policies and customer managed policies too", async () => {
    const inline = stackResource("aws:iam/role:Role", "j", {
      name: "j",
      inlinePolicies: [
        { name: "x", policy: doc(allow("iam:PassRole", "arn:aws:iam::123456789012:role/Admin", toScheduler)) },
      ],
    });
    await assertHasStackViolation(p, [targetRole(), inline], {
      message: 'Role "j" inline policy "x" statement 1 allows iam:PassRole on',
    });
    const policy = stackResource("aws:iam/policy:Policy", "ops", {
      policy: doc(allow("iam:*", "arn:aws:iam::123456789012:role/Admin")),
    });
    await assertHasStackViolation(p, [targetRole(), policy], {
      message: 'Policy "ops" statement 1 allows iam:PassRole on',
    });
  });
  it("leaves wildcards to passrole-only-to-scheduler (one violation per mistake)", () =>
    assertNoStackViolations(p, [targetRole(), passing("arn:aws:iam::123456789012:role/*")]));
});
