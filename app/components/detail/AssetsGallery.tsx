import { useEffect, useRef, useState } from 'react';
import type { AssetRef } from '../../../src/service/contract.js';
import { useApp, useAppStore } from '../../store/react.js';
import { formatBytes } from '../../lib/format.js';
import { assetUrl } from '../../transport/media.js';

/** Assets up to this size are previewed inline; bigger ones offer "show in folder". */
export const ASSET_PREVIEW_MAX_BYTES = 16 * 1024 * 1024;

const isImage = (m: string) => m.startsWith('image/');
const isPdf = (m: string) => m === 'application/pdf';

/**
 * Where an asset is served: `api/asset/<payloadId>/<sha256>` on the page's origin, from the
 * transport (transport/media.ts: `spillway serve` needs a signed per-asset ticket, the desktop
 * shell answers its app:// protocol). Images are only ever shown through <img> (an SVG in <img>
 * runs no script); PDFs go into a frame.
 */
function useAssetUrl(payloadId: string, asset: AssetRef, enabled: boolean) {
  const [state, setState] = useState<{ error?: string; loading: boolean }>({ loading: enabled });
  const [url, setUrl] = useState<string>();
  useEffect(() => {
    setState({ loading: enabled });
    setUrl(undefined);
    if (!enabled) return;
    let live = true;
    assetUrl(payloadId, asset.sha256).then(
      (u) => live && setUrl(u),
      () => live && setState({ loading: false, error: 'Could not load the asset' }),
    );
    return () => {
      live = false;
    };
  }, [payloadId, asset.sha256, enabled]);
  return {
    url,
    loading: state.loading,
    error: state.error,
    onLoad: () => setState({ loading: false }),
    onError: () => setState({ loading: false, error: 'Could not load the asset' }),
  };
}

export function AssetsGallery({ highlight }: { highlight?: string | null }) {
  const detail = useApp((s) => s.detail);
  const [open, setOpen] = useState<AssetRef | null>(null);
  if (!detail) return null;
  if (detail.assets.length === 0)
    return (
      <div className="state">
        <strong>No assets</strong>
        <span>Nothing binary (images, audio, PDFs, base64 blobs) was cut out of this payload.</span>
      </div>
    );
  return (
    <div className="scroll pad">
      <div className="gallery" data-testid="assets">
        {detail.assets.map((a) => (
          <AssetCard key={a.sha256 + a.jsonPath} payloadId={detail.row.id} asset={a} highlighted={a.sha256 === highlight} onOpen={() => setOpen(a)} />
        ))}
      </div>
      {open ? <AssetLightbox payloadId={detail.row.id} asset={open} onClose={() => setOpen(null)} /> : null}
    </div>
  );
}

function AssetCard({ payloadId, asset, highlighted, onOpen }: { payloadId: string; asset: AssetRef; highlighted: boolean; onOpen: () => void }) {
  const previewable = (isImage(asset.mimeType) || isPdf(asset.mimeType)) && asset.bytes <= ASSET_PREVIEW_MAX_BYTES;
  const { url, error, loading, onLoad, onError } = useAssetUrl(payloadId, asset, previewable && isImage(asset.mimeType));
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (highlighted) ref.current?.scrollIntoView({ block: 'nearest' });
  }, [highlighted]);
  return (
    <div ref={ref} className={`asset-card ${highlighted ? 'highlight' : ''}`}>
      <button className="asset-thumb" onClick={onOpen} aria-label={`Open ${asset.mimeType} asset ${asset.sha256.slice(0, 10)}`} disabled={!previewable}>
        {isImage(asset.mimeType) && url && !error ? <img src={url} alt={`${asset.mimeType} asset`} loading="lazy" onLoad={onLoad} onError={onError} /> : null}
        {isImage(asset.mimeType) && loading ? <span className="spinner" /> : null}
        {!isImage(asset.mimeType) || error ? <span className="asset-type">{isPdf(asset.mimeType) ? 'PDF' : (asset.mimeType.split('/')[1] ?? 'bin').toUpperCase()}</span> : null}
      </button>
      <AssetFacts payloadId={payloadId} asset={asset} note={error} />
    </div>
  );
}

function AssetFacts({ payloadId, asset, note }: { payloadId: string; asset: AssetRef; note?: string }) {
  const store = useAppStore();
  const reveal = async () => {
    const res = await store.getState().withToast('Show in folder', () => store.deps.api.revealPath({ payloadId, sha256: asset.sha256 }));
    if (!res) return;
    try {
      await navigator.clipboard?.writeText(res.path);
      store.getState().notify('info', `Path copied: ${res.path}`);
    } catch {
      store.getState().notify('info', res.path);
    }
  };
  return (
    <dl className="asset-facts">
      <dt>Type</dt>
      <dd>
        {asset.mimeType} {asset.sniffed ? <span className="badge ok" title="Type read from the file's magic bytes">sniffed</span> : <span className="badge" title="Type declared or guessed, not verified">declared</span>}
      </dd>
      <dt>Size</dt>
      <dd>{formatBytes(asset.bytes)}</dd>
      <dt>From</dt>
      <dd className="mono ellipsis" title={asset.jsonPath}>{asset.source} at {asset.jsonPath}</dd>
      <dt>sha256</dt>
      <dd className="mono ellipsis" title={asset.sha256}>{asset.sha256}</dd>
      {note ? <dd className="dim full">{note}</dd> : null}
      <dd className="full">
        <button className="btn sm" onClick={() => void reveal()}>Show in folder</button>
      </dd>
    </dl>
  );
}

function AssetLightbox({ payloadId, asset, onClose }: { payloadId: string; asset: AssetRef; onClose: () => void }) {
  const { url, error, loading, onLoad, onError } = useAssetUrl(payloadId, asset, true);
  const closeRef = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    closeRef.current?.focus();
    const onKey = (e: KeyboardEvent) => e.key === 'Escape' && onClose();
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [onClose]);
  return (
    <div className="overlay" role="dialog" aria-modal="true" aria-label="Asset preview" onClick={onClose}>
      <div className="lightbox" onClick={(e) => e.stopPropagation()}>
        <header className="card-head">
          <h3>{asset.mimeType} · {formatBytes(asset.bytes)}</h3>
          <button ref={closeRef} className="btn ghost sm" onClick={onClose}>Close</button>
        </header>
        <div className="lightbox-body">
          {loading && isImage(asset.mimeType) ? <span className="spinner" /> : null}
          {error ? <div className="state error">{error}</div> : null}
          {url && isImage(asset.mimeType) ? <img src={url} alt={`${asset.mimeType} asset`} onLoad={onLoad} onError={onError} /> : null}
          {url && isPdf(asset.mimeType) ? <iframe title="PDF asset" src={url} /> : null}
        </div>
      </div>
    </div>
  );
}
