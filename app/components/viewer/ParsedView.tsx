import { useEffect, useState } from 'react';
import { MAX_READ_WINDOW_BYTES } from '../../../src/service/contract.js';
import { useAppStore } from '../../store/react.js';
import { errorMessage } from '../../transport/errors.js';
import { formatBytes } from '../../lib/format.js';
import { JsonTree, type AssetLink } from './JsonTree.js';
import { treeValueOf } from '../../lib/mcp.js';

/** Largest payload parsed for the tree view: one read window (parsing more would block the window). */
export const TREE_MAX_BYTES = MAX_READ_WINDOW_BYTES;
/** NDJSON lines shown in the tree. */
const NDJSON_MAX_LINES = 5_000;

type State =
  | { state: 'loading' }
  | { state: 'ready'; value: unknown; note?: string }
  | { state: 'not-json'; reason: string }
  | { state: 'error'; message: string };

export function parseForTree(text: string): { value: unknown; note?: string } | null {
  try {
    return treeValueOf(JSON.parse(text));
  } catch {
    /* maybe NDJSON */
  }
  const lines = text.split('\n').filter((l) => l.trim());
  if (lines.length < 2) return null;
  const out: unknown[] = [];
  for (const line of lines.slice(0, NDJSON_MAX_LINES)) {
    try {
      out.push(JSON.parse(line));
    } catch {
      return null;
    }
  }
  return { value: out, note: lines.length > NDJSON_MAX_LINES ? `First ${NDJSON_MAX_LINES.toLocaleString()} of ${lines.length.toLocaleString()} lines` : `NDJSON: ${lines.length.toLocaleString()} lines` };
}

/** A payload (raw or linked) parsed as JSON and shown as a collapsible tree. */
export function ParsedView(props: { payloadId: string; variant: 'raw' | 'linked'; totalBytes: number; onAsset?: (ref: AssetLink) => void }) {
  const { api } = useAppStore().deps;
  const [st, setSt] = useState<State>({ state: 'loading' });
  useEffect(() => {
    let live = true;
    setSt({ state: 'loading' });
    void (async () => {
      try {
        const head = await api.readPayload({ id: props.payloadId, variant: props.variant, start: 0, end: TREE_MAX_BYTES });
        if (!live) return;
        if (head.binary) return setSt({ state: 'not-json', reason: 'This payload is binary.' });
        if (head.totalBytes > TREE_MAX_BYTES)
          return setSt({ state: 'not-json', reason: `The tree view parses payloads up to ${formatBytes(TREE_MAX_BYTES)}; this one is ${formatBytes(head.totalBytes)}. Use Raw, which streams it in windows.` });
        // Parse after the paint that shows the spinner, so the click feels instant.
        await new Promise((r) => setTimeout(r, 0));
        const parsed = parseForTree(head.text);
        if (!live) return;
        setSt(parsed ? { state: 'ready', ...parsed } : { state: 'not-json', reason: 'This payload is not JSON or NDJSON.' });
      } catch (err) {
        if (live) setSt({ state: 'error', message: errorMessage(err) });
      }
    })();
    return () => {
      live = false;
    };
  }, [api, props.payloadId, props.variant]);

  if (st.state === 'loading') return <div className="state"><span className="spinner" /> Parsing…</div>;
  if (st.state === 'error') return <div className="state error" role="alert"><strong>Could not read this payload.</strong><span>{st.message}</span></div>;
  if (st.state === 'not-json') return <div className="state"><strong>No tree for this payload</strong><span>{st.reason}</span></div>;
  return (
    <div className="scroll pad">
      {st.note ? <div className="note">{st.note}</div> : null}
      <JsonTree value={st.value} onAsset={props.onAsset} defaultOpenDepth={2} />
    </div>
  );
}
