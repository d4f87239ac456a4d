import os from 'node:os';
import path from 'node:path';

/**
 * Where Spillway keeps its own files (index database, default sessions root, scratch
 * sessions, templates, config). `SPILLWAY_HOME` overrides the OS default; `env` is the caller's
 * variables, read at the edge (the CLI, the integrations, serve, Electron) and passed down.
 */
export function appDataDir(env: NodeJS.ProcessEnv): string {
  if (env.SPILLWAY_HOME) return path.resolve(env.SPILLWAY_HOME);
  const home = os.homedir();
  switch (process.platform) {
    case 'darwin':
      return path.join(home, 'Library', 'Application Support', 'spillway');
    case 'win32':
      return path.join(env.APPDATA ?? path.join(home, 'AppData', 'Roaming'), 'spillway');
    default:
      return path.join(env.XDG_DATA_HOME ?? path.join(home, '.local', 'share'), 'spillway');
  }
}

export const appPaths = (env: NodeJS.ProcessEnv) => {
  const root = appDataDir(env);
  return {
    root,
    /** SQLite index of every registered root. */
    db: path.join(root, 'index.sqlite'),
    /** Default sessions root: `spillway mcp` without `--session` writes here. */
    sessions: path.join(root, 'sessions'),
    /** One-off analyses of dropped files. */
    scratch: path.join(root, 'scratch'),
    /** User prompt templates (`<name>.md`). */
    templates: path.join(root, 'templates'),
    /** Summary runs made on read-only imported payloads, which have no sidecar to hold them (`<payload id>.jsonl`). */
    summaryRuns: path.join(root, 'summary-runs'),
    /** Saved projection specs per tool (`<tool>.json`). */
    projections: path.join(root, 'projections'),
    /** The user's guard rules per tool (docs/config.md). */
    config: path.join(root, 'config.json'),
  };
};

/** The project's guard rules file, in the project folder beside `.mcp.json` (docs/config.md). */
export const PROJECT_RULES_FILE = '.spillway.json';

/** The two guard rules files for a project folder: the project's, then the user's (in app data). */
export function rulesFilePaths(cwd: string, env: NodeJS.ProcessEnv): { project: string; user: string } {
  return { project: path.join(path.resolve(cwd), PROJECT_RULES_FILE), user: appPaths(env).config };
}
