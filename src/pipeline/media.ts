/**
 * A one-line description of binary content for the model, read from the file's own header: what
 * a person would want before opening it (image size, audio length, pages, archive entries).
 * Bounded work on any input: headers and a few windows, never the whole file.
 *
 * | call | for |
 * | --- | --- |
 * | {@link describeBinary} | `GIF image, 1×1 px`, `WAV audio, 1 ch, 8,000 Hz, 16-bit, 0.50 s`, `ZIP archive, 2 entries: a.txt, b/c.png` … or undefined |
 */

/** Bytes of a JPEG searched for its frame header (SOF). */
const JPEG_SCAN_BYTES = 256 * 1024;
/** Bytes at each end of a PDF searched for its page count. */
const PDF_SCAN_BYTES = 256 * 1024;
/** Bytes at the end of a ZIP searched for its end-of-central-directory record (max comment 65,535). */
const ZIP_EOCD_SCAN_BYTES = 22 + 65_535;
/** Entry names listed for an archive. */
const ZIP_LIST_ENTRIES = 5;
/** Longest entry name listed. */
const ZIP_NAME_CHARS = 80;

const int = (n: number) => Math.round(n).toLocaleString('en-US');

function ascii(b: Uint8Array, at: number, len: number): string {
  let s = '';
  for (let i = at; i < at + len && i < b.length; i++) s += String.fromCharCode(b[i]!);
  return s;
}

function view(b: Uint8Array): DataView {
  return new DataView(b.buffer, b.byteOffset, b.byteLength);
}

function png(b: Uint8Array): string | undefined {
  if (b.length < 24 || ascii(b, 12, 4) !== 'IHDR') return undefined;
  const v = view(b);
  return `PNG image, ${int(v.getUint32(16))}×${int(v.getUint32(20))} px`;
}

function gif(b: Uint8Array): string | undefined {
  if (b.length < 10) return undefined;
  const v = view(b);
  return `GIF image, ${int(v.getUint16(6, true))}×${int(v.getUint16(8, true))} px`;
}

function jpeg(b: Uint8Array): string | undefined {
  const v = view(b);
  const end = Math.min(b.length, JPEG_SCAN_BYTES);
  for (let i = 2; i + 9 < end; ) {
    if (b[i] !== 0xff) return undefined;
    const marker = b[i + 1]!;
    const len = v.getUint16(i + 2);
    // SOF0..SOF15, except DHT (C4), JPG (C8) and DAC (CC), carry the frame size.
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return `JPEG image, ${int(v.getUint16(i + 7))}×${int(v.getUint16(i + 5))} px`;
    }
    i += 2 + len;
  }
  return 'JPEG image';
}

function riff(b: Uint8Array): string | undefined {
  if (b.length < 12) return undefined;
  const form = ascii(b, 8, 4);
  const v = view(b);
  if (form === 'WEBP') {
    const chunk = ascii(b, 12, 4);
    if (chunk === 'VP8X' && b.length >= 30) return `WebP image, ${int(1 + (v.getUint32(24, true) & 0xffffff))}×${int(1 + (v.getUint32(27, true) & 0xffffff))} px`;
    if (chunk === 'VP8L' && b.length >= 25) {
      const bits = v.getUint32(21, true);
      return `WebP image, ${int((bits & 0x3fff) + 1)}×${int(((bits >> 14) & 0x3fff) + 1)} px`;
    }
    if (chunk === 'VP8 ' && b.length >= 30) return `WebP image, ${int(v.getUint16(26, true) & 0x3fff)}×${int(v.getUint16(28, true) & 0x3fff)} px`;
    return 'WebP image';
  }
  if (form !== 'WAVE') return undefined;
  let fmt: { ch: number; rate: number; bits: number; byteRate: number } | undefined;
  for (let i = 12; i + 8 <= b.length; ) {
    const id = ascii(b, i, 4);
    const size = v.getUint32(i + 4, true);
    if (id === 'fmt ' && i + 24 <= b.length) {
      fmt = { ch: v.getUint16(i + 10, true), rate: v.getUint32(i + 12, true), byteRate: v.getUint32(i + 16, true), bits: v.getUint16(i + 22, true) };
    } else if (id === 'data' && fmt) {
      const secs = fmt.byteRate > 0 ? Math.min(size, b.length - i - 8) / fmt.byteRate : 0;
      return `WAV audio, ${fmt.ch} ch, ${int(fmt.rate)} Hz, ${fmt.bits}-bit, ${secs.toFixed(2)} s`;
    }
    i += 8 + size + (size & 1);
  }
  return fmt ? `WAV audio, ${fmt.ch} ch, ${int(fmt.rate)} Hz, ${fmt.bits}-bit` : 'WAV audio';
}

function pdf(b: Uint8Array): string {
  const version = /^%PDF-(\d\.\d)/.exec(ascii(b, 0, 16))?.[1];
  const head = Buffer.from(b.buffer, b.byteOffset, Math.min(b.length, PDF_SCAN_BYTES)).toString('latin1');
  const tail = b.length > PDF_SCAN_BYTES ? Buffer.from(b.buffer, b.byteOffset + b.length - PDF_SCAN_BYTES, PDF_SCAN_BYTES).toString('latin1') : '';
  // The page tree root carries the page count (`/Type /Pages … /Count n`); the largest is the root's.
  let pages = 0;
  for (const m of (head + tail).matchAll(/\/Type\s*\/Pages\b[^>]{0,200}?\/Count\s+(\d+)|\/Count\s+(\d+)[^>]{0,200}?\/Type\s*\/Pages\b/g)) {
    pages = Math.max(pages, Number(m[1] ?? m[2]));
  }
  return `PDF document${version ? `, version ${version}` : ''}${pages ? `, ${int(pages)} page${pages === 1 ? '' : 's'}` : ''}`;
}

function zip(b: Uint8Array): string {
  const v = view(b);
  const from = Math.max(0, b.length - ZIP_EOCD_SCAN_BYTES);
  for (let i = b.length - 22; i >= from; i--) {
    if (v.getUint32(i, true) !== 0x06054b50) continue;
    const entries = v.getUint16(i + 10, true);
    const names: string[] = [];
    let p = v.getUint32(i + 16, true);
    for (let k = 0; k < Math.min(entries, ZIP_LIST_ENTRIES) && p + 46 <= b.length && v.getUint32(p, true) === 0x02014b50; k++) {
      const nameLen = v.getUint16(p + 28, true);
      const name = Buffer.from(b.buffer, b.byteOffset + p + 46, Math.min(nameLen, b.length - p - 46)).toString('utf8');
      names.push(name.length > ZIP_NAME_CHARS ? `${name.slice(0, ZIP_NAME_CHARS)}…` : name);
      p += 46 + nameLen + v.getUint16(p + 30, true) + v.getUint16(p + 32, true);
    }
    const list = names.length ? `: ${names.join(', ')}${entries > names.length ? `, … ${int(entries - names.length)} more` : ''}` : '';
    return `ZIP archive, ${int(entries)} entr${entries === 1 ? 'y' : 'ies'}${list}`;
  }
  return 'ZIP archive';
}

/** What the bytes are, from their header; undefined for formats it does not read. Never throws. */
export function describeBinary(bytes: Uint8Array): string | undefined {
  try {
    const b = bytes;
    if (b[0] === 0x89 && ascii(b, 1, 3) === 'PNG') return png(b);
    if (ascii(b, 0, 4) === 'GIF8') return gif(b);
    if (b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return jpeg(b);
    if (ascii(b, 0, 4) === 'RIFF') return riff(b);
    if (ascii(b, 0, 5) === '%PDF-') return pdf(b);
    if (ascii(b, 0, 4) === 'PK\x03\x04' || ascii(b, 0, 4) === 'PK\x05\x06') return zip(b);
    if (b[0] === 0x1f && b[1] === 0x8b) return 'gzip data';
    if (ascii(b, 0, 4) === '\x7fELF') return 'ELF executable';
    return undefined;
  } catch {
    return undefined;
  }
}
