/** Where Claude Code keeps what belongs to a transcript beside it. */
import path from 'node:path';

/** Where Claude Code keeps a transcript's spill files (`<project>/<session id>/tool-results/`; sub-agents share their session's). */
export function claudeToolResultsDir(transcript: string): string {
  const dir = path.dirname(transcript);
  if (path.basename(dir) === 'subagents') return path.join(path.dirname(dir), 'tool-results');
  return path.join(dir, path.basename(transcript, '.jsonl'), 'tool-results');
}

/** A sub-agent transcript's parent (`<project>/<session>/subagents/x.jsonl` → `<project>/<session>.jsonl`). */
export function claudeParentTranscript(transcript: string): string | undefined {
  const dir = path.dirname(transcript);
  if (path.basename(dir) !== 'subagents') return undefined;
  const sessionDir = path.dirname(dir);
  return `${sessionDir}.jsonl`;
}
