/**
 * The occurrence ledger for tests: dynalite (a DynamoDB implementation in Node) on 127.0.0.1, with one table keyed as
 * the stack's (`pk`, a string). Code under test reaches it through AWS_ENDPOINT_URL_DYNAMODB, as it would AWS.
 */
import { AddressInfo } from "net";
import { CreateTableCommand, DeleteItemCommand, DynamoDBClient, ScanCommand } from "@aws-sdk/client-dynamodb";
import { LEDGER_KEY } from "../../infra/rules/ledger";

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
  // No types ship with dynalite: it returns a Node HTTP server.
  // createTableMs 0: the table is ACTIVE as soon as it is created.
  const server = require("dynalite")({ createTableMs: 0, deleteTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new DynamoDBClient({ endpoint: url, region: "us-east-1", credentials: TEST_CREDENTIALS });
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      KeySchema: [{ AttributeName: LEDGER_KEY, KeyType: "HASH" }],
      AttributeDefinitions: [{ AttributeName: LEDGER_KEY, AttributeType: "S" }],
      BillingMode: "PAY_PER_REQUEST",
    }),
  );
  const scan = async () => (await client.send(new ScanCommand({ TableName: tableName }))).Items ?? [];
  return {
    url,
    tableName,
    items: async () =>
      (await scan()).map((item) =>
        Object.fromEntries(Object.entries(item).map(([k, v]) => [k, v.N !== undefined ? Number(v.N) : v.S!])),
      ),
    clear: async () => {
      for (const item of await scan())
        await client.send(new DeleteItemCommand({ TableName: tableName, Key: { [LEDGER_KEY]: item[LEDGER_KEY] } }));
    },
    close: async () => {
      client.destroy();
      server.closeAllConnections?.();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
