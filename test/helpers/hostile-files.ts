/**
 * Files a reader must refuse, planted under the name it will ask for: a FIFO (opening it for
 * reading blocks until a writer comes), a unix socket, a device node (mknod when we may, else a
 * link to /dev/zero), a hard link to a file outside the folder, and a symbolic link.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export type HostileKind = 'fifo' | 'socket' | 'device' | 'hardlink' | 'symlink';
export const HOSTILE_KINDS: HostileKind[] = ['fifo', 'socket', 'device', 'hardlink', 'symlink'];

const servers: net.Server[] = [];

/** A file outside every test folder whose bytes must never be read through a planted name. */
export function outsideSecret(text = 'SECRET-OUTSIDE-' + Math.random().toString(36).slice(2)): { file: string; text: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'spillway-outside-'));
  const file = path.join(dir, 'secret.txt');
  fs.writeFileSync(file, text);
  return { file, text };
}

/** Replace whatever is at `file` by a hostile entry of `kind`. */
export async function plant(file: string, kind: HostileKind, secretFile = outsideSecret().file): Promise<void> {
  fs.rmSync(file, { force: true });
  switch (kind) {
    case 'fifo':
      execFileSync('mkfifo', [file]);
      return;
    case 'socket': {
      const s = net.createServer();
      await new Promise<void>((resolve, reject) => s.once('error', reject).listen(file, resolve));
      servers.push(s);
      return;
    }
    case 'device':
      if (process.getuid?.() === 0) execFileSync('mknod', [file, 'c', '1', '5']); // /dev/zero's numbers
      else fs.symlinkSync('/dev/zero', file);
      return;
    case 'hardlink':
      fs.linkSync(secretFile, file);
      return;
    case 'symlink':
      fs.symlinkSync(secretFile, file);
      return;
  }
}

/** Close the sockets planted so far (a listening socket keeps the test process alive). */
export async function closePlanted(): Promise<void> {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
}
