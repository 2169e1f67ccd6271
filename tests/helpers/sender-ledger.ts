/**
 * The one sender's ledger for tests that run the sender for something else (what SES receives): a FakeTable that
 * answers its claim, state read and record, in front of the test's own services.
 */
import type { SenderParameters } from "../../infra/state-machines/sender-states";
import { FakeTable, JsonataServices } from "./jsonata-interpreter";

export const LEDGER_TABLE = "bulk-sender-ledger-1a2b3c4";

/** The sender's parameters with a ledger (and the rest as given). */
export function senderTestParameters(p: Omit<SenderParameters, "ledger" | "partition"> & { partition?: string }) {
  return { partition: "aws", ...p, ledger: { tableName: LEDGER_TABLE } } as SenderParameters;
}

/** `services`, with the ledger's calls answered by `ledger` (a fresh table unless given). */
export function withLedger(services: JsonataServices, ledger = new FakeTable(LEDGER_TABLE)): JsonataServices {
  return {
    call: (service, action, args) =>
      service === "dynamodb" && args.TableName === LEDGER_TABLE
        ? ledger.call(action, args)
        : services.call(service, action, args),
  };
}
