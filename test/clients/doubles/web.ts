/**
 * A page for Claude Code's WebFetch to fetch, on loopback. WebFetch upgrades http:// to https://,
 * so this is HTTPS with a throwaway self-signed certificate (made with openssl) that the client
 * trusts through NODE_EXTRA_CA_CERTS; its domain preflight (a call to claude.ai) is turned off
 * with the `skipWebFetchPreflight` setting. Nothing leaves the machine.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export interface WebPage {
  url: string;
  /** The certificate to trust (NODE_EXTRA_CA_CERTS). */
  certPath: string;
  close(): Promise<void>;
}

export async function startWebPage(dir: string, html: string): Promise<WebPage> {
  const keyPath = path.join(dir, 'key.pem');
  const certPath = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyPath, '-out', certPath, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
    { stdio: 'ignore', timeout: 60_000 },
  );
  const server = https.createServer({ key: fs.readFileSync(keyPath), cert: fs.readFileSync(certPath) }, (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/page`,
    certPath,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
