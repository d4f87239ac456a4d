/** Reading a dropped or picked File for `analyze`, without blocking the main thread. */

/** Largest file sent over HTTP as base64 (Electron passes the path instead and has no such limit). */
export const MAX_UPLOAD_BYTES = 256 * 1024 * 1024;

/** Base64 of a file's bytes. FileReader encodes off the main thread; we only strip the data-URL prefix. */
export function fileToBase64(file: Blob): Promise<string> {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onerror = () => reject(r.error ?? new Error('could not read the file'));
    r.onload = () => {
      const url = String(r.result ?? '');
      const comma = url.indexOf(',');
      resolve(comma === -1 ? '' : url.slice(comma + 1));
    };
    r.readAsDataURL(file);
  });
}
