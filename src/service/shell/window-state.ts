/** The desktop window's remembered bounds, in a private (0600) file of the app's user-data folder. */
import fs from 'node:fs';
import { writePrivateFileSync } from '../private-files.js';
import type { WindowState } from './policy.js';

export function readWindowState(file: string): WindowState {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8')) as WindowState;
  } catch {
    return {};
  }
}

/** Merge `patch` into the file; window state is a convenience, so a failure is ignored. */
export function saveWindowState(file: string, patch: Partial<WindowState>): void {
  try {
    writePrivateFileSync(file, JSON.stringify({ ...readWindowState(file), ...patch }, null, 2));
  } catch {
    /* never fail over window bounds */
  }
}
