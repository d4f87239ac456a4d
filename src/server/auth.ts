/**
 * The credentials of `spillway serve`. No cookie: browsers send cookies to every port of a host,
 * so any other server on 127.0.0.1 would receive one. Instead:
 *
 * - **The token** (32 random bytes) is the session credential. It travels only in
 *   `Authorization: Bearer` headers, which browsers never send on their own; the page keeps it in
 *   a variable, never in storage, a cookie or a URL.
 * - **Launch codes** are what URLs carry: `http://127.0.0.1:PORT/#launch=CODE`. The page trades
 *   the code for the token once (`POST /api/auth/launch`); the code is then dead, so the URL left
 *   in history, in a terminal's scrollback or in `xdg-open`'s argv opens nothing. It sits in the
 *   fragment, which no request line, log or Referer carries.
 * - **Renewal secrets** keep a reload from locking the user out. The launch exchange (and each
 *   renewal) also hands the page a renewal secret, which it keeps in `sessionStorage`: per origin
 *   (scheme, host and port, so no other server on 127.0.0.1 can read it, unlike a cookie), per tab,
 *   gone when the tab closes. After a reload the page trades it (`POST /api/auth/renew`) for the
 *   token and a fresh secret. Each secret works once and lives RENEWAL_TTL_MS; the page rotates it
 *   while it runs. A spent secret presented again means two holders (a copy was taken): every
 *   secret of that line is revoked, so neither the thief nor the tab can renew again.
 * - **Asset tickets** let `<img src>` and a PDF frame load without a header:
 *   `?ticket=EXP.MAC`, an HMAC-SHA256 (keyed with the token) of one asset's payload id and hash
 *   and an expiry at most ASSET_TICKET_MAX_TTL_MS away. The page signs them itself (WebCrypto), so
 *   no round trip, and a leaked ticket opens one asset for a few minutes.
 */
import crypto from 'node:crypto';

/** Token length when generated: 32 random bytes, base64url (43 chars). */
export const TOKEN_BYTES = 32;
/** Shortest token accepted from the caller. */
export const MIN_TOKEN_CHARS = 16;
/** Random bytes of a launch code. */
export const LAUNCH_CODE_BYTES = 32;
/** Launch codes waiting to be used; minting one more forgets the oldest. */
export const MAX_PENDING_LAUNCH_CODES = 16;
/** Random bytes of a renewal secret. */
export const RENEWAL_SECRET_BYTES = 32;
/** A renewal secret dies this long after it was issued (the page rotates it well before: RENEWAL_ROTATE_MS in app/transport/http.ts). */
export const RENEWAL_TTL_MS = 60 * 60_000;
/** Live renewal secrets kept; minting one more forgets the oldest (each open tab holds one). */
export const MAX_LIVE_RENEWALS = 64;
/** Spent renewal secrets remembered, to tell a replayed one (a stolen copy) from a random guess. */
export const MAX_SPENT_RENEWALS = 1024;
/** Longest an asset ticket may be valid for, from now. */
export const ASSET_TICKET_MAX_TTL_MS = 15 * 60_000;

const TOKEN_RE = /^[A-Za-z0-9_-]+$/;

export function isAcceptableToken(t: string): boolean {
  return t.length >= MIN_TOKEN_CHARS && t.length <= 512 && TOKEN_RE.test(t);
}

function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && crypto.timingSafeEqual(ab, bb);
}

/** What an asset ticket signs; the page builds the same string (app/transport/http.ts). */
export function assetTicketMessage(payloadId: string, sha256: string, expiresAtMs: number): string {
  return `spillway-asset\n${payloadId}\n${sha256}\n${expiresAtMs}`;
}

/** A ticket for one asset (`EXP.MAC`), as the page makes them. */
export function signAssetTicket(token: string, payloadId: string, sha256: string, expiresAtMs: number): string {
  const mac = crypto.createHmac('sha256', token).update(assetTicketMessage(payloadId, sha256, expiresAtMs)).digest('base64url');
  return `${expiresAtMs}.${mac}`;
}

export class ServeAuth {
  private readonly launches = new Map<string, number>();
  /** Live renewal secrets: expiry and line (every secret rotated from one launch shares its line). */
  private readonly renewals = new Map<string, { expiresAt: number; line: string }>();
  /** Spent renewal secrets and their line, oldest first. */
  private readonly spent = new Map<string, string>();

  constructor(readonly token: string) {}

  /** `Authorization: Bearer <token>`, compared in constant time. */
  bearer(header: string | undefined): boolean {
    return !!header && header.startsWith('Bearer ') && safeEqual(header.slice(7).trim(), this.token);
  }

  /** A fresh one-time launch code, valid until used (or, with `ttlMs`, until then). */
  mintLaunchCode(ttlMs?: number, now = Date.now()): string {
    const code = crypto.randomBytes(LAUNCH_CODE_BYTES).toString('base64url');
    this.launches.set(code, ttlMs === undefined ? Infinity : now + ttlMs);
    while (this.launches.size > MAX_PENDING_LAUNCH_CODES) this.launches.delete(this.launches.keys().next().value!);
    return code;
  }

  /** Trade a launch code for the token: true once per code, while it has not expired. */
  redeemLaunchCode(code: unknown, now = Date.now()): boolean {
    if (typeof code !== 'string' || code.length > 256) return false;
    for (const [c, expiresAt] of this.launches) {
      if (expiresAt < now) this.launches.delete(c);
      else if (safeEqual(c, code)) {
        this.launches.delete(c);
        return true;
      }
    }
    return false;
  }

  /** A renewal secret, starting a new line (after a launch) or continuing `line` (after a renewal). */
  mintRenewal(line = crypto.randomBytes(16).toString('base64url'), now = Date.now()): string {
    const secret = crypto.randomBytes(RENEWAL_SECRET_BYTES).toString('base64url');
    this.renewals.set(secret, { expiresAt: now + RENEWAL_TTL_MS, line });
    while (this.renewals.size > MAX_LIVE_RENEWALS) this.renewals.delete(this.renewals.keys().next().value!);
    return secret;
  }

  /**
   * Trade a renewal secret for a fresh one (the caller then hands out the token with it); undefined
   * when it is unknown, expired or spent. A spent one revokes its whole line: it was copied.
   */
  renew(secret: unknown, now = Date.now()): string | undefined {
    if (typeof secret !== 'string' || secret.length > 256) return undefined;
    let found: { expiresAt: number; line: string } | undefined;
    for (const [s, r] of this.renewals) {
      if (r.expiresAt < now) this.renewals.delete(s);
      else if (!found && safeEqual(s, secret)) found = r;
    }
    if (found) {
      this.renewals.delete(secret);
      this.spent.set(secret, found.line);
      while (this.spent.size > MAX_SPENT_RENEWALS) this.spent.delete(this.spent.keys().next().value!);
      return this.mintRenewal(found.line, now);
    }
    let replayed: string | undefined;
    for (const [s, line] of this.spent) if (safeEqual(s, secret)) replayed = line;
    if (replayed !== undefined) for (const [s, r] of this.renewals) if (r.line === replayed) this.renewals.delete(s);
    return undefined;
  }

  /** Whether `ticket` is a live ticket for exactly this asset. */
  assetTicket(ticket: string | null, payloadId: string, sha256: string, now = Date.now()): boolean {
    if (!ticket || ticket.length > 200) return false;
    const dot = ticket.indexOf('.');
    const exp = Number(ticket.slice(0, dot));
    if (dot <= 0 || !Number.isSafeInteger(exp) || exp < now || exp > now + ASSET_TICKET_MAX_TTL_MS) return false;
    return safeEqual(ticket, signAssetTicket(this.token, payloadId, sha256, exp));
  }
}
