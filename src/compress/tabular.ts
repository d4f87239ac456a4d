/**
 * Turning a stored payload into rows: arrays of objects, NDJSON and CSV/TSV become rows;
 * anything else becomes lines. Shared by the handle store (and usable without SQLite).
 */

export type Shaped =
  | { kind: 'rows'; rows: Array<Record<string, unknown>>; source: string }
  | { kind: 'lines'; lines: string[]; source: string };

const NUM_RE = /^-?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?$/;
/** Depth searched for an array of objects inside a JSON object (`{"data": {"items": [...]}}`). */
const MAX_ARRAY_SEARCH_DEPTH = 4;

/** Split text into lines (\n or \r\n), without a phantom last line for a trailing newline. */
export function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  for (let i = 0; i < lines.length; i++) if (lines[i]!.endsWith('\r')) lines[i] = lines[i]!.slice(0, -1);
  return lines;
}

/** RFC 4180 CSV (quotes, doubled quotes, newlines in quotes), any single-char delimiter. */
export function parseCsv(text: string, delim: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let q = false;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i]!;
    if (q) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          cell += '"';
          i += 2;
          continue;
        }
        q = false;
        i++;
        continue;
      }
      // copy a run of plain chars at once
      const next = text.indexOf('"', i);
      const end = next === -1 ? n : next;
      cell += text.slice(i, end);
      i = end;
      continue;
    }
    if (c === '"' && cell === '') {
      q = true;
      i++;
    } else if (c === delim) {
      row.push(cell);
      cell = '';
      i++;
    } else if (c === '\n' || c === '\r') {
      row.push(cell);
      cell = '';
      if (!(row.length === 1 && row[0] === '')) rows.push(row);
      row = [];
      i += c === '\r' && text[i + 1] === '\n' ? 2 : 1;
    } else {
      let j = i + 1;
      while (j < n) {
        const d = text[j]!;
        if (d === delim || d === '\n' || d === '\r' || d === '"') break;
        j++;
      }
      cell += text.slice(i, j);
      i = j;
    }
  }
  if (cell !== '' || row.length) {
    row.push(cell);
    rows.push(row);
  }
  return rows;
}

export function csvDelimiter(text: string): string | null {
  const lines = splitLines(text.slice(0, 64 * 1024)).slice(0, 20).filter((l) => l.trim());
  if (lines.length < 2) return null;
  let best: string | null = null;
  let bestCols = 1;
  for (const d of [',', '\t', ';', '|']) {
    const counts = lines.map((l) => (l.includes('"') ? parseCsv(l, d)[0]?.length ?? 0 : l.split(d).length));
    const first = counts[0]!;
    const same = counts.filter((c) => c === first).length / counts.length;
    if (first > bestCols && same >= 0.8) {
      best = d;
      bestCols = first;
    }
  }
  return best;
}

function cellValue(s: string): unknown {
  if (s === '') return null;
  if (NUM_RE.test(s) && s.length < 16) return Number(s);
  return s;
}

/** A dictionary of records (`{"pkg-a": {...}, "pkg-b": {...}}`) with at least this many keys becomes rows keyed by `_key`. */
const MIN_DICT_ROWS = 8;

function findRecords(v: unknown, path: string, depth: number): { rows: unknown[]; path: string } | null {
  if (Array.isArray(v)) return v.length && v.some((x) => x && typeof x === 'object' && !Array.isArray(x)) ? { rows: v, path } : null;
  if (!v || typeof v !== 'object' || depth >= MAX_ARRAY_SEARCH_DEPTH) return null;
  let best: { rows: unknown[]; path: string } | null = null;
  const entries = Object.entries(v as Record<string, unknown>);
  if (depth > 0 && entries.length >= MIN_DICT_ROWS && entries.every(([, x]) => x && typeof x === 'object' && !Array.isArray(x))) {
    best = { rows: entries.map(([k, x]) => ({ _key: k, ...(x as Record<string, unknown>) })), path: `${path}.*` };
  }
  for (const [k, child] of Object.entries(v as Record<string, unknown>)) {
    const seg = /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `[${JSON.stringify(k)}]`;
    const r = findRecords(child, path + seg, depth + 1);
    if (r && (!best || r.rows.length > best.rows.length)) best = r;
  }
  return best;
}

/** Decide how a payload is stored: rows (with the JSON path they came from) or lines. */
export function shape(payload: unknown, hint?: { fileName?: string }): Shaped {
  if (payload instanceof Uint8Array) payload = Buffer.from(payload).toString('utf8');
  if (typeof payload === 'string') {
    const text = payload;
    const t = text.trimStart();
    if (t.startsWith('{') || t.startsWith('[')) {
      try {
        return shapeValue(JSON.parse(text));
      } catch {
        const lines = splitLines(text).filter((l) => l.trim());
        if (lines.length > 1) {
          const rows: Array<Record<string, unknown>> = [];
          let ok = true;
          for (const l of lines) {
            try {
              const v = JSON.parse(l);
              rows.push(v && typeof v === 'object' && !Array.isArray(v) ? v : { value: v });
            } catch {
              ok = false;
              break;
            }
          }
          if (ok) return { kind: 'rows', rows, source: 'ndjson' };
        }
      }
    }
    const ext = hint?.fileName?.toLowerCase().split('.').pop();
    const delim = ext === 'tsv' ? '\t' : ext === 'csv' ? ',' : csvDelimiter(text);
    if (delim && (ext === 'csv' || ext === 'tsv' || looksTabular(text, delim))) {
      const table = parseCsv(text, delim);
      const header = (table[0] ?? []).map((h, i) => h.trim() || `column${i + 1}`);
      const seen = new Map<string, number>();
      const names = header.map((h) => {
        const k = seen.get(h) ?? 0;
        seen.set(h, k + 1);
        return k ? `${h}_${k + 1}` : h;
      });
      const rows = table.slice(1).map((cells) => {
        const r: Record<string, unknown> = {};
        names.forEach((name, i) => (r[name] = cellValue(cells[i] ?? '')));
        return r;
      });
      return { kind: 'rows', rows, source: delim === '\t' ? 'tsv' : 'csv' };
    }
    return { kind: 'lines', lines: splitLines(text), source: 'text' };
  }
  return shapeValue(payload);
}

function looksTabular(text: string, delim: string): boolean {
  // Prose with commas is not a table: require a header of short cells.
  const first = splitLines(text.slice(0, 4096))[0] ?? '';
  const cells = first.split(delim);
  return cells.length >= 2 && cells.every((c) => c.trim().length > 0 && c.length <= 64 && !/[.!?]\s/.test(c));
}

function shapeValue(v: unknown): Shaped {
  const found = findRecords(v, '$', 0);
  if (found) {
    const rows = found.rows.map((x) => (x && typeof x === 'object' && !Array.isArray(x) ? (x as Record<string, unknown>) : { value: x }));
    return { kind: 'rows', rows, source: found.path };
  }
  if (Array.isArray(v)) return { kind: 'rows', rows: v.map((x) => ({ value: x })), source: '$' };
  if (v && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>);
    // a dictionary of records: one row per key
    if (entries.length >= 2 && entries.every(([, x]) => x && typeof x === 'object' && !Array.isArray(x))) {
      return { kind: 'rows', rows: entries.map(([k, x]) => ({ _key: k, ...(x as Record<string, unknown>) })), source: '$.*' };
    }
  }
  return { kind: 'lines', lines: splitLines(JSON.stringify(v, null, 2) ?? 'null'), source: 'json' };
}
