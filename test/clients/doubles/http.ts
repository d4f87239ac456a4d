/**
 * The loopback HTTP server both model doubles sit on: port 0 (never a fixed port), every request
 * recorded with its parsed JSON body, open sockets destroyed on close so a client that keeps a
 * connection alive never holds a test open.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  method: string;
  /** Path and query as sent. */
  url: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body, or the raw text when it is not JSON. */
  body: any;
  at: number;
}

export type Handler = (req: RecordedRequest, res: http.ServerResponse) => void;

export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** Largest request body read (the clients resend the whole conversation every turn). */
const MAX_REQUEST_BODY_BYTES = 256 * 1024 * 1024;

export async function startLoopback(handle: Handler): Promise<LoopbackServer> {
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    req.on('data', (c: Buffer) => {
      bytes += c.length;
      if (bytes <= MAX_REQUEST_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any = raw;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        /* keep the text */
      }
      const rec: RecordedRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body, at: Date.now() };
      requests.push(rec);
      try {
        handle(rec, res);
      } catch (err) {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: String(err) }));
      }
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** One server-sent event, as `event: <name>\ndata: <json>\n\n`. */
export function sse(res: http.ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

let seq = 0;
/** An id shaped like the provider's (`msg_…`, `resp_…`), unique in the process. */
export const streamId = (prefix: string) => `${prefix}_${Date.now().toString(36)}${(seq++).toString(36).padStart(6, '0')}`;

/** Cut a string into `n` roughly equal pieces, as the APIs stream partial JSON and text. */
export function pieces(s: string, n: number): string[] {
  if (s.length <= n) return [s];
  const size = Math.ceil(s.length / n);
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}
