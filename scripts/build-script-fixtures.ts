/**
 * Builds test/estimate/fixtures/more-scripts.json: ~3,000 chars of real UI text per language, in
 * scripts the calibration corpus (node_modules) has little or no running text in, from GTK 3's
 * message catalogues as Debian ships them (`/usr/share/locale/<lang>/LC_MESSAGES/gtk30.mo`, package
 * libgtk-3-common). Run once on a Debian machine: `npx tsx scripts/build-script-fixtures.ts`.
 * The output is committed, so tests never need the catalogues.
 */
import fs from 'node:fs';
import path from 'node:path';

/** Language -> what it stands for (Greek and the Cyrillic languages the fit prices worst, RTL scripts...). */
export const LANGUAGES: Record<string, string> = {
  el: 'Greek',
  ru: 'Russian',
  uk: 'Ukrainian',
  bg: 'Bulgarian',
  sr: 'Serbian (Cyrillic)',
  mk: 'Macedonian',
  be: 'Belarusian',
  kk: 'Kazakh',
  ky: 'Kyrgyz',
  mn: 'Mongolian',
  tg: 'Tajik',
  he: 'Hebrew',
  yi: 'Yiddish',
  ar: 'Arabic',
  fa: 'Persian',
  ur: 'Urdu',
  ug: 'Uyghur',
  ps: 'Pashto',
  hy: 'Armenian',
  am: 'Amharic (Ethiopic)',
  ko: 'Korean',
  vi: 'Vietnamese',
};

const TARGET_CHARS = 3_000;

/** Translated strings of a GNU .mo catalogue (header entry skipped; plural forms joined by " / "). */
export function readMo(file: string): string[] {
  const b = fs.readFileSync(file);
  const magic = b.readUInt32LE(0);
  const read = magic === 0x950412de ? (o: number) => b.readUInt32LE(o) : (o: number) => b.readUInt32BE(o);
  if (magic !== 0x950412de && b.readUInt32BE(0) !== 0x950412de) throw new Error(`${file}: not a .mo file`);
  const n = read(8);
  const origins = read(12);
  const translations = read(16);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    if (read(origins + i * 8) === 0) continue; // the header (empty msgid)
    const len = read(translations + i * 8);
    const off = read(translations + i * 8 + 4);
    out.push(b.toString('utf8', off, off + len).split('\0').join(' / '));
  }
  return out;
}

/** Share of a string's letters that are not ASCII: the UI strings that are really in the script. */
function scriptShare(s: string): number {
  let letters = 0;
  let nonAscii = 0;
  for (const ch of s) {
    if (/\p{L}/u.test(ch)) {
      letters++;
      if (ch.charCodeAt(0) > 127) nonAscii++;
    }
  }
  return letters ? nonAscii / letters : 0;
}

/** GTK's catalogue first; where it is thin (Amharic, Kyrgyz, Urdu), the language's other catalogues in name order. */
function build(lang: string): { text: string; catalogues: string[] } {
  const dir = `/usr/share/locale/${lang}/LC_MESSAGES`;
  const files = ['gtk30.mo', ...fs.readdirSync(dir).filter((f) => f.endsWith('.mo') && f !== 'gtk30.mo').sort()];
  // Vietnamese is Latin with diacritics: most of its letters are ASCII, so ask for fewer.
  const min = lang === 'vi' ? 0.3 : 0.6;
  const picked: string[] = [];
  const catalogues: string[] = [];
  let n = 0;
  for (const f of files) {
    if (n >= TARGET_CHARS) break;
    catalogues.push(f);
    for (const s of readMo(path.join(dir, f))) {
      if (s.length < 8 || scriptShare(s) < min) continue;
      picked.push(s);
      n += s.length + 1;
      if (n >= TARGET_CHARS) break;
    }
  }
  return { text: picked.join('\n'), catalogues };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out: Record<string, string> = {};
  for (const lang of Object.keys(LANGUAGES)) {
    const b = build(lang);
    out[lang] = b.text;
    if (b.catalogues.length > 1) console.log(`${lang}: ${b.catalogues.join(', ')}`);
  }
  const target = path.resolve(import.meta.dirname, '../test/estimate/fixtures/more-scripts.json');
  fs.writeFileSync(target, JSON.stringify(out, null, 1) + '\n');
  console.log(Object.entries(out).map(([k, v]) => `${k}:${v.length}`).join(' '));
}
