/**
 * --bulk's one-click unsubscribe links: the key and endpoint they are made with (BulkSigning), and each recipient's
 * link and the texts made of it, built around the recipient's token (UnsubscribeLinks).
 */
import { jsonTextBytes } from "../../../infra/core/plan/bulk-plan-row";
import { ses } from "../../../infra/core/plan/quotas";

import {
  UNSUBSCRIBE_TEMPLATE_KEY,
  MAX_TOKEN_ADDRESS_CHARS,
  UnsubscribeSigner,
  unsubscribeHeaders,
  unsubscribeLink,
} from "../../../infra/core/consent/unsubscribe";
import { InternalError } from "../../../infra/core/errors";

/** The template variable that holds each recipient's unsubscribe link; a list column of this name is refused. */
export const UNSUBSCRIBE_KEY = UNSUBSCRIBE_TEMPLATE_KEY;

/** The endpoint a dry run without stack outputs links to. */
export const PLACEHOLDER_UNSUBSCRIBE_URL = "https://unsubscribe.invalid/";

/** The key and endpoint unsubscribe links are made with, and where they came from (for the summary). */
export interface BulkSigning {
  /**
   * The stack's signing key; none in a dry run, whose links are unsigned (a zero signature: well formed, the sizes of
   * signed ones, never valid), since a dry run makes no AWS call and so never has the key.
   */
  key: Buffer | undefined;
  baseUrl: string;
  /** True without a key: the plan's tokens are not valid. */
  placeholder: boolean;
  source: string;
}

/**
 * Per-recipient unsubscribe links, each exactly unsubscribeUrl(baseUrl, key, email) (or unsigned: UnsubscribeSigner), and the texts made of them: the
 * text around the token is the same for every address (a base64url token is never percent-encoded nor JSON-escaped),
 * so it is found once and each text is that text around the recipient's token; its sizes are the fixed text's plus
 * the token's length (ASCII).
 */
export class UnsubscribeLinks {
  private readonly around: Record<"link" | "json" | "headers" | "data", [string, string]>;
  /** jsonTextBytes of the fixed part of `"unsubscribe_url":<link JSON>,`, and bytes of the headers' JSON's. */
  private readonly fixed: { data: { bytes: number; escapes: number }; headersBytes: number };
  private readonly signer: UnsubscribeSigner;
  /** Links with tokens signed with `key`, or unsigned without one (UnsubscribeSigner). */
  constructor(baseUrl: string, key: Buffer | undefined) {
    this.signer = new UnsubscribeSigner(key);
    const token = this.signer.token("probe@example.com");
    const url = unsubscribeLink(baseUrl, token);
    const split = (text: string): [string, string] => {
      const at = text.indexOf(token);
      if (at < 0 || text.lastIndexOf(token) !== at)
        throw new InternalError(`the unsubscribe link of ${baseUrl} does not hold its token once`);
      return [text.slice(0, at), text.slice(at + token.length)];
    };
    this.around = {
      link: split(url),
      json: split(JSON.stringify(url)),
      headers: split(JSON.stringify(unsubscribeHeaders(url))),
      data: split(`${JSON.stringify(UNSUBSCRIBE_KEY)}:${JSON.stringify(url)},`),
    };
    const { data, headers } = this.around;
    this.fixed = {
      data: jsonTextBytes(data[0] + data[1]),
      headersBytes: Buffer.byteLength(headers[0] + headers[1]),
    };
  }

  /** The address's token, or why it cannot have one (the token or the header would be too long). */
  token(email: string): string | { problem: string } {
    const token = this.signer.token(email);
    if (token.indexOf(".") > MAX_TOKEN_ADDRESS_CHARS)
      return {
        problem: `address too long for an unsubscribe token (at most 300 bytes): --bulk cannot give it one-click unsubscribe`,
      };
    const [before, after] = this.around.link;
    const length = before.length + token.length + after.length;
    if (length + 2 > ses.header.maxValueChars)
      return {
        problem: `its List-Unsubscribe header would be ${length + 2} characters, over SES's ${ses.header.maxValueChars}`,
      };
    return token;
  }

  /** The text `kind` made of a token: the link, its JSON, the headers' JSON, or the template data's member. */
  text(kind: "link" | "json" | "headers" | "data", token: string): string {
    const [before, after] = this.around[kind];
    return before + token + after;
  }

  /** The sizes of text("data", token) (jsonTextBytes) and of text("headers", token) (bytes). */
  sizes(token: string): { dataBytes: number; dataEscapes: number; headersBytes: number } {
    const { data, headersBytes } = this.fixed;
    return {
      dataBytes: data.bytes + token.length,
      dataEscapes: data.escapes,
      headersBytes: headersBytes + token.length,
    };
  }
}
