/**
 * Where the page loads an asset from, picked with the transport (pick.ts): over `spillway serve`
 * a same-origin URL with a ticket the page signed (an `<img>` cannot send the token), in the
 * desktop app the app:// path, which the main process answers itself.
 */
type AssetUrlFn = (payloadId: string, sha256: string) => Promise<string>;

const relative: AssetUrlFn = async (payloadId, sha256) => new URL(`api/asset/${encodeURIComponent(payloadId)}/${encodeURIComponent(sha256)}`, document.baseURI).href;

let current: AssetUrlFn = relative;

export function setAssetUrls(fn: AssetUrlFn): void {
  current = fn;
}

/** The URL to put in `<img src>` or a PDF frame for one asset of one payload. */
export function assetUrl(payloadId: string, sha256: string): Promise<string> {
  return current(payloadId, sha256);
}
