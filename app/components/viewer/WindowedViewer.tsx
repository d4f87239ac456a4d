import { useCallback, useEffect, useRef, useState } from 'react';
import type { ContentKind } from '../../../src/service/contract.js';
import { useAppStore } from '../../store/react.js';
import { errorMessage } from '../../transport/errors.js';
import { formatBytes, formatPercent } from '../../lib/format.js';
import { languageFor } from '../../lib/language.js';
import { Editor } from './Editor.js';
import type { MonacoEditor } from './MonacoView.js';
import {
  appendChunk,
  BINARY_WINDOW_BYTES,
  joinChunks,
  cutChunk,
  makeChunk,
  prependChunk,
  prettyJson,
  TEXT_WINDOW_BYTES,
  WHOLE_LOAD_MAX_BYTES,
  type Chunk,
} from './windows.js';

export interface WindowedViewerProps {
  payloadId: string;
  variant: 'raw' | 'linked';
  /** A hint (from the table row): the first read tells the real size and whether it is binary. */
  totalBytes: number;
  binary: boolean;
  kind: ContentKind;
  path?: string;
}

type Status = { state: 'loading' } | { state: 'ready' } | { state: 'error'; message: string };

/**
 * The payload in Monaco, loaded in byte windows through readPayload: opening a 100 MB payload
 * reads one window, and scrolling near either edge swaps the next window in while keeping the
 * line under the cursor where it was.
 */
export function WindowedViewer(props: WindowedViewerProps) {
  const { api } = useAppStore().deps;
  const { payloadId, variant } = props;
  // Known for sure after the first read; until then the row's hints.
  const [binary, setBinary] = useState(props.binary);
  const [totalBytes, setTotalBytes] = useState(props.totalBytes);
  const windowBytes = binary ? BINARY_WINDOW_BYTES : TEXT_WINDOW_BYTES;
  const whole = !binary && totalBytes <= WHOLE_LOAD_MAX_BYTES;
  const binaryRef = useRef(props.binary);
  const [status, setStatus] = useState<Status>({ state: 'loading' });
  const [range, setRange] = useState<{ start: number; end: number; total: number }>({ start: 0, end: 0, total: totalBytes });
  const [pretty, setPretty] = useState(true);
  const [formatted, setFormatted] = useState(false);
  const editorRef = useRef<MonacoEditor | null>(null);
  const [editorMounted, setEditorMounted] = useState(false);
  const chunksRef = useRef<Chunk[]>([]);
  const busyRef = useRef(false);
  const genRef = useRef(0);
  const totalRef = useRef(props.totalBytes);

  const read = useCallback(
    async (start: number, end: number) => {
      const res = await api.readPayload({ id: payloadId, variant, start, end });
      totalRef.current = res.totalBytes;
      binaryRef.current = res.binary;
      return { chunk: makeChunk(res.start, res.end, res.hex ?? res.text), res };
    },
    [api, payloadId, variant],
  );

  const [shownId, setShownId] = useState<string | null>(null);
  const show = useCallback((chunks: Chunk[], anchorShift?: number, formattedText?: string | null) => {
    chunksRef.current = chunks;
    const first = chunks[0];
    const last = chunks[chunks.length - 1];
    setRange({ start: first?.start ?? 0, end: last?.end ?? 0, total: totalRef.current });
    const editor = editorRef.current;
    const model = editor?.getModel();
    if (!editor || !model) return;
    let anchor: { line: number; delta: number } | undefined;
    if (anchorShift !== undefined) {
      const top = editor.getVisibleRanges()[0]?.startLineNumber ?? 1;
      anchor = { line: top, delta: editor.getScrollTop() - editor.getTopForLineNumber(top) };
    }
    model.setValue(formattedText ?? joinChunks(chunks));
    setShownId(payloadId);
    if (anchor && anchorShift !== undefined) {
      const line = Math.max(1, anchor.line + anchorShift);
      editor.setScrollTop(editor.getTopForLineNumber(line) + anchor.delta);
    } else {
      editor.setScrollTop(0);
    }
  }, [payloadId]);

  const loadAt = useCallback(
    async (start: number, toEnd = false) => {
      const gen = ++genRef.current;
      busyRef.current = true;
      setStatus({ state: 'loading' });
      try {
        // The first read asks for up to WHOLE_LOAD_MAX_BYTES: a small payload arrives whole in one trip.
        const want = start === 0 && !binaryRef.current && props.totalBytes <= WHOLE_LOAD_MAX_BYTES ? WHOLE_LOAD_MAX_BYTES + 1 : windowBytes;
        const { chunk, res } = await read(start, toEnd ? totalRef.current : start + want);
        if (gen !== genRef.current) return;
        setTotalBytes(res.totalBytes);
        setBinary(res.binary);
        const isWhole = !res.binary && res.totalBytes <= WHOLE_LOAD_MAX_BYTES;
        if (!isWhole && chunk.end - chunk.start > windowBytes * 2) {
          // A big payload: keep the editor to one window's worth; the rest streams in on scroll.
          const cut = cutChunk(chunk, windowBytes);
          show([cut], undefined, null);
          setFormatted(false);
          setStatus({ state: 'ready' });
          return;
        }
        const fmt = isWhole && pretty ? prettyJson(chunk.text) : null;
        setFormatted(fmt !== null);
        show([chunk], undefined, fmt);
        if (toEnd) editorRef.current?.setScrollTop(editorRef.current.getScrollHeight());
        setStatus({ state: 'ready' });
      } catch (err) {
        if (gen !== genRef.current) return;
        setStatus({ state: 'error', message: errorMessage(err) });
      } finally {
        if (gen === genRef.current) busyRef.current = false;
      }
    },
    [read, show, windowBytes, pretty, props.totalBytes],
  );

  const loadNext = useCallback(async () => {
    const chunks = chunksRef.current;
    const last = chunks[chunks.length - 1];
    if (busyRef.current || !last || last.end >= totalRef.current) return;
    busyRef.current = true;
    const gen = genRef.current;
    try {
      const { chunk: next } = await read(last.end, Math.min(last.end + windowBytes, totalRef.current));
      if (gen !== genRef.current || next.end <= last.end) return;
      const { chunks: merged, linesRemovedAtTop } = appendChunk(chunksRef.current, next);
      show(merged, -linesRemovedAtTop);
    } catch (err) {
      setStatus({ state: 'error', message: errorMessage(err) });
    } finally {
      if (gen === genRef.current) busyRef.current = false;
    }
  }, [read, show, windowBytes]);

  const loadPrev = useCallback(async () => {
    const first = chunksRef.current[0];
    if (busyRef.current || !first || first.start <= 0) return;
    busyRef.current = true;
    const gen = genRef.current;
    try {
      const { chunk: prev } = await read(Math.max(0, first.start - windowBytes), first.start);
      if (gen !== genRef.current || prev.start >= first.start) return;
      const { chunks: merged, linesAddedAtTop } = prependChunk(chunksRef.current, prev);
      show(merged, linesAddedAtTop);
    } catch (err) {
      setStatus({ state: 'error', message: errorMessage(err) });
    } finally {
      if (gen === genRef.current) busyRef.current = false;
    }
  }, [read, show, windowBytes]);

  // (Re)load when the payload, variant or formatting choice changes.
  useEffect(() => {
    chunksRef.current = [];
    void loadAt(0);
    return () => {
      // genRef counts loads (it is no DOM node): bumping the live value is what tells the load in flight it is stale.
      // eslint-disable-next-line react-hooks/exhaustive-deps -- see above
      genRef.current++;
    };
  }, [payloadId, variant, loadAt]);

  const edges = useRef({ loadNext, loadPrev });
  edges.current = { loadNext, loadPrev };

  const onEditor = useCallback(
    (editor: MonacoEditor) => {
      editorRef.current = editor;
      setEditorMounted(true);
      if (chunksRef.current.length) show(chunksRef.current, undefined, formatted ? prettyJson(joinChunks(chunksRef.current)) : null);
      editor.onDidScrollChange((e) => {
        if (!e.scrollTopChanged) return;
        const h = editor.getLayoutInfo().height;
        if (e.scrollTop + h >= e.scrollHeight - h) void edges.current.loadNext();
        else if (e.scrollTop <= h) void edges.current.loadPrev();
      });
    },
    [show, formatted],
  );

  const windowed = !whole;
  const shownShare = range.total ? (range.end - range.start) / range.total : 1;
  return (
    <div className="viewer" data-state={status.state === 'ready' && !editorMounted ? 'loading' : status.state} data-window-start={range.start} data-window-end={range.end} data-total={range.total} data-shown={shownId ?? ''}>
      <div className="viewer-bar" role="toolbar" aria-label="Payload window">
        {windowed ? (
          <>
            <span className="mono dim" aria-live="polite">
              {formatBytes(range.start)}–{formatBytes(range.end)} of {formatBytes(range.total)}
              {shownShare < 1 ? ` · ${formatPercent(range.end / Math.max(range.total, 1), 0)}` : ''}
            </span>
            <input
              type="range"
              className="scrubber"
              aria-label="Position in payload"
              min={0}
              max={1000}
              value={Math.round((range.start / Math.max(range.total, 1)) * 1000)}
              onChange={(e) => void loadAt(Math.floor((Number(e.target.value) / 1000) * range.total))}
            />
            <button className="btn ghost sm" onClick={() => void loadAt(0)} disabled={range.start === 0} title="Start of payload">
              Start
            </button>
            <button
              className="btn ghost sm"
              onClick={() => void loadAt(Math.max(0, range.total - windowBytes), true)}
              disabled={range.end >= range.total}
              title="End of payload"
            >
              End
            </button>
          </>
        ) : (
          <span className="mono dim">{formatBytes(range.total)}{binary ? ' · hex' : ''}</span>
        )}
        <span className="spacer" />
        {whole && props.kind === 'json' ? (
          <label className="check">
            <input type="checkbox" checked={pretty} onChange={(e) => setPretty(e.target.checked)} /> Format
          </label>
        ) : null}
        {status.state === 'loading' ? <span className="spinner" aria-label="Loading" /> : null}
      </div>
      {status.state === 'error' ? (
        <div className="state error" role="alert">
          <strong>Could not read this payload.</strong>
          <span>{status.message}</span>
          <button className="btn sm" onClick={() => void loadAt(range.start)}>
            Retry
          </button>
        </div>
      ) : null}
      <div className="viewer-editor">
        <Editor
          language={binary ? 'plaintext' : languageFor(props.kind, props.path)}
          onEditor={onEditor}
          minimap={false}
          ariaLabel="Payload content"
        />
      </div>
    </div>
  );
}
