/**
 * HMAC-SHA256 (RFC 2104, FIPS 180-4) for one key and many short messages, in JavaScript: the key's inner and outer
 * padded blocks are hashed once, so a message of up to 55 bytes costs two compressions and no native call. Why not
 * Node's createHmac: a bulk dry run signs one unsubscribe token per recipient, and createHmac's object and native
 * calls cost about twice this per token (measured: docs/benchmarks.md, "Bulk sends"). Equal to createHmac's output by
 * test (tests/infra/hmac-sha256.test.ts, every message length across block boundaries). Signing only: verification
 * stays with Node's crypto and timingSafeEqual (infra/rules/unsubscribe.ts). Pure: no I/O.
 */
import { createHash } from "crypto";

const BLOCK = 64;
const DIGEST = 32;

// prettier-ignore
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
// prettier-ignore
const IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

const W = new Int32Array(64);

/** One SHA-256 compression of the 64 bytes of `b` at `at` into `state`. */
function compress(state: Int32Array, b: Uint8Array, at: number): void {
  for (let i = 0; i < 16; i++) {
    const j = at + 4 * i;
    W[i] = (b[j] << 24) | (b[j + 1] << 16) | (b[j + 2] << 8) | b[j + 3];
  }
  for (let i = 16; i < 64; i++) {
    const x = W[i - 15];
    const y = W[i - 2];
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
  }
  let a = state[0];
  let b1 = state[1];
  let c = state[2];
  let d = state[3];
  let e = state[4];
  let f = state[5];
  let g = state[6];
  let h = state[7];
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[i] + W[i]) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & b1) ^ (a & c) ^ (b1 & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b1;
    b1 = a;
    a = (t1 + t2) | 0;
  }
  state[0] = (state[0] + a) | 0;
  state[1] = (state[1] + b1) | 0;
  state[2] = (state[2] + c) | 0;
  state[3] = (state[3] + d) | 0;
  state[4] = (state[4] + e) | 0;
  state[5] = (state[5] + f) | 0;
  state[6] = (state[6] + g) | 0;
  state[7] = (state[7] + h) | 0;
}

/** The state after one padded key block (the key XOR `pad`). */
function keyState(key: Uint8Array, pad: number): Int32Array {
  const block = new Uint8Array(BLOCK);
  for (let i = 0; i < BLOCK; i++) block[i] = (key[i] ?? 0) ^ pad;
  const state = Int32Array.from(IV);
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
