import type { ChildProcess } from 'node:child_process';

/**
 * The first line a spawned `spillway serve` prints on stdout: its URL. Rejects, with what serve wrote
 * on stderr so far, when it prints none within 60 s or exits first.
 */
export function serveUrl(child: ChildProcess, stderr: () => string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`serve printed no URL; stderr: ${stderr()}`)), 60_000);
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('\n')) {
        clearTimeout(timer);
        resolve(out.split('\n')[0]!);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}: ${stderr()}`));
    });
  });
}
