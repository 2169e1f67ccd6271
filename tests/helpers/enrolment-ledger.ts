/**
 * The occurrence ledger as the journeys' tests read it (tests/helpers/ledger.ts's dynalite, its items unwrapped). Code
 * under test reaches it through AWS_ENDPOINT_URL_DYNAMODB, as it would AWS.
 */
import { DeleteItemCommand, ScanCommand } from "@aws-sdk/client-dynamodb";
import { LEDGER_KEY } from "../../infra/core/send/ledger";
import { startLedger as startLocalLedger } from "./ledger";

// As the scripts' clients: the SDK's Node-version notice stays off the test output.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= "true";

export interface TestLedger {
  url: string;
  tableName: string;
  /** Every item, attribute values unwrapped (`{S: "x"}` → "x", `{N: "1"}` → 1). */
  items(): Promise<Record<string, string | number>[]>;
  clear(): Promise<void>;
  close(): Promise<void>;
}

/** Credentials the SDK signs with; dynalite checks none. */
export const TEST_CREDENTIALS = { accessKeyId: "test", secretAccessKey: "test" };

export async function startLedger(tableName: string): Promise<TestLedger> {
  const ledger = await startLocalLedger([], tableName);
  const { client } = ledger;
  const scan = async () => (await client.send(new ScanCommand({ TableName: tableName }))).Items ?? [];
  return {
    url: ledger.url,
    tableName,
    items: async () =>
      (await scan()).map((item) =>
        Object.fromEntries(Object.entries(item).map(([k, v]) => [k, v.N !== undefined ? Number(v.N) : v.S!])),
      ),
    clear: async () => {
      for (const item of await scan())
        await client.send(new DeleteItemCommand({ TableName: tableName, Key: { [LEDGER_KEY]: item[LEDGER_KEY] } }));
    },
    close: () => ledger.close(),
  };
}
