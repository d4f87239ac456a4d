import { memo, useState, type ReactNode } from 'react';
import { formatBytes } from '../../lib/format.js';

/** Children shown per expansion step; big arrays page in instead of rendering 100,000 nodes. */
export const TREE_PAGE = 100;
/** Strings longer than this are cut (with a toggle to show all). */
export const TREE_STRING_CHARS = 400;

export interface AssetLink {
  path: string;
  mimeType: string;
  bytes: number;
  sha256: string;
}

export function assetRefOf(value: unknown): AssetLink | null {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return null;
  const ref = (value as { $spillwayAsset?: unknown }).$spillwayAsset;
  if (!ref || typeof ref !== 'object') return null;
  const r = ref as Partial<AssetLink>;
  return typeof r.sha256 === 'string' ? { path: String(r.path ?? ''), mimeType: String(r.mimeType ?? ''), bytes: Number(r.bytes ?? 0), sha256: r.sha256 } : null;
}

/** Nodes visited when looking for asset references below a node (keeps huge subtrees cheap). */
const ASSET_SCAN_NODES = 5_000;

/** True when an asset reference sits somewhere below: such nodes open by default so references are one click away. */
export function hasAssetRef(value: unknown, budget = { n: ASSET_SCAN_NODES }): boolean {
  if (value === null || typeof value !== 'object' || --budget.n < 0) return false;
  if (assetRefOf(value)) return true;
  for (const v of Array.isArray(value) ? value : Object.values(value as object)) {
    if (hasAssetRef(v, budget)) return true;
    if (budget.n < 0) return false;
  }
  return false;
}

interface NodeProps {
  name: string | number | null;
  value: unknown;
  depth: number;
  path: string;
  onAsset?: (ref: AssetLink) => void;
  defaultOpenDepth: number;
}

/**
 * Collapsible JSON tree. Values are rendered as text nodes only (never HTML), children page in,
 * and linked-JSON asset references become buttons that open the asset.
 */
export function JsonTree(props: { value: unknown; onAsset?: (ref: AssetLink) => void; defaultOpenDepth?: number }) {
  return (
    <div className="json-tree mono" role="tree" aria-label="JSON tree">
      <JsonNode name={null} value={props.value} depth={0} path="$" onAsset={props.onAsset} defaultOpenDepth={props.defaultOpenDepth ?? 1} />
    </div>
  );
}

const JsonNode = memo(function JsonNode({ name, value, depth, path, onAsset, defaultOpenDepth }: NodeProps) {
  const [open, setOpen] = useState(() => depth < defaultOpenDepth || (!!onAsset && hasAssetRef(value)));
  const [shown, setShown] = useState(TREE_PAGE);
  const label = name === null ? null : <span className="jt-key">{typeof name === 'number' ? name : JSON.stringify(name)}</span>;
  const ref = assetRefOf(value);
  if (ref) {
    return (
      <div role="treeitem" aria-level={depth + 1} className="jt-row" style={{ paddingLeft: depth * 14 }}>
        <span className="jt-toggle-space" />
        {label}
        {label ? <span className="jt-punct">: </span> : null}
        <button className="asset-chip" onClick={() => onAsset?.(ref)} title={`Open asset ${ref.sha256}`} aria-label={`Open asset ${ref.mimeType || ''} ${ref.sha256.slice(0, 10)}`}>
          <span aria-hidden>◆</span> {ref.mimeType || 'asset'} · {formatBytes(ref.bytes)} · {ref.sha256.slice(0, 10)}
        </button>
      </div>
    );
  }
  if (value !== null && typeof value === 'object') {
    const isArray = Array.isArray(value);
    const entries: Array<[string | number, unknown]> = isArray
      ? (value as unknown[]).slice(0, shown).map((v, i) => [i, v])
      : Object.entries(value as Record<string, unknown>).slice(0, shown);
    const count = isArray ? (value as unknown[]).length : Object.keys(value as object).length;
    const brackets = isArray ? ['[', ']'] : ['{', '}'];
    return (
      <div role="treeitem" aria-level={depth + 1} aria-expanded={open}>
        <div className="jt-row" style={{ paddingLeft: depth * 14 }}>
          <button className="jt-toggle" aria-label={`${open ? 'Collapse' : 'Expand'} ${path}`} onClick={() => setOpen(!open)}>
            {open ? '▾' : '▸'}
          </button>
          {label}
          {label ? <span className="jt-punct">: </span> : null}
          <span className="jt-punct">{brackets[0]}</span>
          {!open ? (
            <button className="jt-summary" onClick={() => setOpen(true)}>
              {count} {isArray ? (count === 1 ? 'item' : 'items') : count === 1 ? 'key' : 'keys'}
            </button>
          ) : null}
          {!open ? <span className="jt-punct">{brackets[1]}</span> : null}
        </div>
        {open ? (
          <div role="group">
            {entries.map(([k, v]) => (
              <JsonNode
                key={k}
                name={k}
                value={v}
                depth={depth + 1}
                path={typeof k === 'number' ? `${path}[${k}]` : `${path}.${k}`}
                onAsset={onAsset}
                defaultOpenDepth={defaultOpenDepth}
              />
            ))}
            {count > shown ? (
              <div className="jt-row" style={{ paddingLeft: (depth + 1) * 14 }}>
                <button className="btn ghost sm" onClick={() => setShown(shown + TREE_PAGE * 10)}>
                  Show {Math.min(TREE_PAGE * 10, count - shown).toLocaleString()} more of {(count - shown).toLocaleString()}
                </button>
              </div>
            ) : null}
            <div className="jt-row" style={{ paddingLeft: depth * 14 }}>
              <span className="jt-toggle-space" />
              <span className="jt-punct">{brackets[1]}</span>
            </div>
          </div>
        ) : null}
      </div>
    );
  }
  return (
    <div role="treeitem" aria-level={depth + 1} className="jt-row" style={{ paddingLeft: depth * 14 }}>
      <span className="jt-toggle-space" />
      {label}
      {label ? <span className="jt-punct">: </span> : null}
      <Primitive value={value} />
    </div>
  );
});

function Primitive({ value }: { value: unknown }): ReactNode {
  const [full, setFull] = useState(false);
  if (typeof value === 'string') {
    const long = value.length > TREE_STRING_CHARS;
    const text = long && !full ? value.slice(0, TREE_STRING_CHARS) : value;
    return (
      <span className="jt-string">
        {JSON.stringify(text)}
        {long ? (
          <button className="jt-more" onClick={() => setFull(!full)}>
            {full ? 'less' : `… ${(value.length - TREE_STRING_CHARS).toLocaleString()} more chars`}
          </button>
        ) : null}
      </span>
    );
  }
  if (typeof value === 'number') return <span className="jt-number">{String(value)}</span>;
  if (typeof value === 'boolean') return <span className="jt-bool">{String(value)}</span>;
  return <span className="jt-null">null</span>;
}
