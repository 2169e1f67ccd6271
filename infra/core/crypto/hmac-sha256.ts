/**
 * HMAC-SHA256 (RFC 2104) for one key and many short messages, in JavaScript (sha256.ts's compression): the key's inner and outer
 * padded blocks are hashed once, so a message of up to 55 bytes costs two compressions and no native call. Why not
 * Node's createHmac: a bulk dry run signs one unsubscribe token per recipient, and createHmac's object and native
 * calls cost about twice this per token (measured: docs/benchmarks.md, "Bulk sends"). Equal to createHmac's output by
 * test (tests/infra/core/crypto/hmac-sha256.test.ts, every message length across block boundaries). Signing only: verification
 * stays with Node's crypto and timingSafeEqual (infra/core/consent/unsubscribe.ts). Pure: no I/O.
 */
import { createHash } from "crypto";
import { SHA256_IV, sha256Compress } from "./sha256";

const BLOCK = 64;
const DIGEST = 32;
// Read once: the CLI's transpiler (esbuild, CommonJS) makes each use of an import a getter call.
const compress = sha256Compress;

/** The state after one padded key block (the key XOR `pad`). */
function keyState(key: Uint8Array, pad: number): Int32Array {
  const block = new Uint8Array(BLOCK);
  for (let i = 0; i < BLOCK; i++) block[i] = (key[i] ?? 0) ^ pad;
  const state = Int32Array.from(SHA256_IV);
  compress(state, block, 0);
  return state;
}

/** Writes `state` big-endian into `out` at `at`. */
function putState(state: Int32Array, out: Uint8Array, at: number): void {
  for (let i = 0; i < 8; i++) {
    const v = state[i];
    out[at + 4 * i] = v >>> 24;
    out[at + 4 * i + 1] = (v >>> 16) & 255;
    out[at + 4 * i + 2] = (v >>> 8) & 255;
    out[at + 4 * i + 3] = v & 255;
  }
}

/** Bytes a message of `length` bytes takes with SHA-256's padding (a multiple of 64). */
export function paddedLength(length: number): number {
  return Math.ceil((length + 9) / BLOCK) * BLOCK;
}

export class HmacSha256 {
  private readonly inner: Int32Array;
  private readonly outer: Int32Array;
  private readonly state = new Int32Array(8);
  /** The outer hash's one block: the inner digest, then its padding (fixed: 64 + 32 bytes hashed). */
  private readonly outerBlock = new Uint8Array(BLOCK);

  constructor(key: Uint8Array) {
    const k = key.length > BLOCK ? createHash("sha256").update(key).digest() : key;
    this.inner = keyState(k, 0x36);
    this.outer = keyState(k, 0x5c);
    this.outerBlock[DIGEST] = 0x80;
    const bits = (BLOCK + DIGEST) * 8;
    this.outerBlock[BLOCK - 2] = bits >>> 8;
    this.outerBlock[BLOCK - 1] = bits & 255;
  }

  /**
   * The MAC of the first `length` bytes of `message` into `out` at `at` (32 bytes). `message` is scratch: its bytes
   * from `length` to paddedLength(length) are overwritten with the padding, so it must be at least that long.
   */
  mac(message: Uint8Array, length: number, out: Uint8Array, at: number): void {
    const end = paddedLength(length);
    if (message.length < end) throw new RangeError(`HMAC scratch of ${message.length} bytes: ${end} needed`);
    message[length] = 0x80;
    message.fill(0, length + 1, end - 4);
    // Bits hashed (the key block and the message): fits 32 bits for any message under 512 MB.
    const bits = (BLOCK + length) * 8;
    message[end - 4] = bits >>> 24;
    message[end - 3] = (bits >>> 16) & 255;
    message[end - 2] = (bits >>> 8) & 255;
    message[end - 1] = bits & 255;
    const state = this.state;
    state.set(this.inner);
    for (let i = 0; i < end; i += BLOCK) compress(state, message, i);
    putState(state, this.outerBlock, 0);
    state.set(this.outer);
    compress(state, this.outerBlock, 0);
    putState(state, out, at);
  }
}

const BASE64URL = new TextEncoder().encode("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_");

/** Writes base64url (no padding) of `from[start, end)` into `out` at `at`; returns the position after it. */
export function base64urlInto(from: Uint8Array, start: number, end: number, out: Uint8Array, at: number): number {
  let o = at;
  let i = start;
  for (; i + 3 <= end; i += 3) {
    const v = (from[i] << 16) | (from[i + 1] << 8) | from[i + 2];
    out[o++] = BASE64URL[v >>> 18];
    out[o++] = BASE64URL[(v >>> 12) & 63];
    out[o++] = BASE64URL[(v >>> 6) & 63];
    out[o++] = BASE64URL[v & 63];
  }
  if (end - i === 1) {
    const v = from[i] << 16;
    out[o++] = BASE64URL[v >>> 18];
    out[o++] = BASE64URL[(v >>> 12) & 63];
  } else if (end - i === 2) {
    const v = (from[i] << 16) | (from[i + 1] << 8);
    out[o++] = BASE64URL[v >>> 18];
    out[o++] = BASE64URL[(v >>> 12) & 63];
    out[o++] = BASE64URL[(v >>> 6) & 63];
  }
  return o;
}
