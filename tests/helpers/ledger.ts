/**
 * The occurrence ledger for wire tests: dynalite (a DynamoDB implementation in Node) on 127.0.0.1, in memory, with
 * the ledger's table created as the stack creates it (key `pk`, a string), and each request's X-Amz-Target recorded
 * in the order given (a shared list, so a test can see a write come before another service's call).
 */
import { AddressInfo } from "net";
import { Server } from "http";
import {
  AttributeValue,
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
} from "@aws-sdk/client-dynamodb";
import { LEDGER_KEY } from "../../infra/core/send/ledger";

// eslint-disable-next-line @typescript-eslint/no-require-imports
const dynalite: (o: {
  createTableMs?: number;
  updateTableMs?: number;
  deleteTableMs?: number;
}) => Server = require("dynalite");

/** dynalite on 127.0.0.1, in memory, tables ready at once, and a client for it; close() stops both. */
export interface LocalDynamoDb {
  server: Server;
  url: string;
  client: DynamoDBClient;
  close(): Promise<void>;
}

export async function startDynalite(): Promise<LocalDynamoDb> {
  const server = dynalite({ createTableMs: 0, updateTableMs: 0, deleteTableMs: 0 });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new DynamoDBClient({
    endpoint: url,
    region: "us-east-1",
    credentials: { accessKeyId: "test", secretAccessKey: "test" },
  });
  // dynalite makes a table ACTIVE on a timer even at 0 ms: a write right after CreateTable could find it CREATING
  // (ResourceNotFoundException) on a busy machine. CreateTable through this client returns once the table is ACTIVE.
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const out = await next(args);
      if (context.commandName === "CreateTableCommand") await tableActive(client, (args.input as any).TableName);
      return out;
    },
    { step: "initialize", name: "sendtimeTableActive" },
  );
  const close = () =>
    new Promise<void>((r) => {
      client.destroy();
      server.closeAllConnections?.();
      server.close(() => r());
    });
  return { server, url, client, close };
}

/** Waits (at most 5 s) until dynalite reports the table ACTIVE. */
async function tableActive(client: DynamoDBClient, TableName: string): Promise<void> {
  for (const until = Date.now() + 5_000; Date.now() < until;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName }));
    if (Table?.TableStatus === "ACTIVE") return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`dynalite: table ${TableName} not ACTIVE within 5 s`);
}

export interface LocalLedger {
  url: string;
  table: string;
  client: DynamoDBClient;
  get(pk: string): Promise<Record<string, AttributeValue> | undefined>;
  put(item: Record<string, AttributeValue>): Promise<void>;
  close(): Promise<void>;
}

export async function startLedger(order: string[] = [], table = "ledger-0a1b2c3"): Promise<LocalLedger> {
  const { server, url, client, close } = await startDynalite();
  server.on("request", (req) => order.push(`dynamodb ${String(req.headers["x-amz-target"]).split(".").pop()}`));
  await client.send(
    new CreateTableCommand({
      TableName: table,
      AttributeDefinitions: [{ AttributeName: LEDGER_KEY, AttributeType: "S" }],
      KeySchema: [{ AttributeName: LEDGER_KEY, KeyType: "HASH" }],
      BillingMode: "PAY_PER_REQUEST",
    }),
  );
  order.length = 0; // the table's creation is the test's, not the command's
  return {
    url,
    table,
    client,
    get: async (pk) =>
      (
        await client.send(
          new GetItemCommand({ TableName: table, Key: { [LEDGER_KEY]: { S: pk } }, ConsistentRead: true }),
        )
      ).Item,
    put: async (item) => void (await client.send(new PutItemCommand({ TableName: table, Item: item }))),
    close,
  };
}
