/**
 * Builds the estimator's fixtures from real text Debian ships, for scripts and content that the
 * node_modules corpus (scripts/build-corpus.ts) has little or no running text in. Run on a Debian
 * machine: `npx tsx scripts/build-script-fixtures.ts [--debs DIR]`. The outputs are committed, so
 * tests never need the packages; test/estimate/fixtures/SOURCES.md lists sources and licences.
 *
 *   more-scripts.json   ~3,000 chars of UI text per language (GTK's catalogues), for the decision tests
 *   corpus-extra.json.gz calibration samples {category, source, split, text}:
 *     - translated man pages as `man` prints them (manpages-l10n, manpages-ja, manpages-zh),
 *     - UI message catalogues (/usr/share/locale/<lang>/LC_MESSAGES/*.mo) in 30+ languages,
 *     - emoji-dense code and JSON (node-emoji, python3-emoji, Go and Ruby emoji tables...),
 *     - real tool output (git, npm, dpkg, apt-cache, ls, man, grep) run on this repository.
 *
 * The split is by source, decided here and stored with each sample: a man page (by name, in every
 * language), a catalogue domain (in every language), a Debian package, or a command. Within a
 * category, sources sorted by hash go one in three to the holdout, so both sides always have some.
 *
 * Packages the man pages and emoji data come from, fetched with `apt-get download` into a scratch
 * folder and unpacked with `dpkg-deb -x` (DEBS below); the catalogues are the machine's own.
 */
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const REPO = path.resolve(import.meta.dirname, '..');
const FIXTURES = path.join(REPO, 'test', 'estimate', 'fixtures');
export const EXTRA_CORPUS_FILE = path.join(FIXTURES, 'corpus-extra.json.gz');

export interface ExtraSample {
  category: string;
  source: string;
  split: 'train' | 'holdout';
  text: string;
}

/** The committed calibration samples (empty when the fixture is missing). */
export function readExtraCorpus(file = EXTRA_CORPUS_FILE): ExtraSample[] {
  if (!fs.existsSync(file)) return [];
  return JSON.parse(zlib.gunzipSync(fs.readFileSync(file)).toString('utf8')) as ExtraSample[];
}

/** Language -> what it stands for, for more-scripts.json (the decision tests' languages). */
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

/** Catalogue languages by the category their script puts them in (corpus-extra). */
const UI_LANGUAGES: Record<string, string[]> = {
  'ui-cyrillic': ['ru', 'uk', 'bg', 'sr', 'be', 'kk', 'mk'],
  'ui-greek': ['el'],
  'ui-arabic': ['ar', 'fa', 'ur', 'ug'],
  'ui-hebrew': ['he'],
  'ui-indic': ['hi', 'bn', 'ta', 'te', 'ml', 'gu', 'pa', 'mr', 'kn', 'or', 'si'],
  'ui-southeast-asian': ['th', 'km', 'lo', 'my'],
  'ui-caucasus': ['ka', 'hy'],
  'ui-cjk': ['ja', 'zh_CN', 'zh_TW'],
  'ui-hangul': ['ko'],
  'ui-european': ['de', 'fr', 'es', 'it', 'pl', 'cs', 'pt_BR', 'tr', 'hu', 'ro', 'sv', 'nl'],
  'ui-vietnamese': ['vi'],
};

/** Man page packages (manpages-l10n and friends) by category. */
const MAN_PACKAGES: Record<string, string[]> = {
  'man-cyrillic': ['manpages-ru', 'manpages-uk', 'manpages-mk', 'manpages-sr'],
  'man-greek': ['manpages-el'],
  'man-european': ['manpages-de', 'manpages-fr', 'manpages-es', 'manpages-it', 'manpages-pl', 'manpages-cs', 'manpages-hu', 'manpages-ro'],
  'man-vietnamese': ['manpages-vi'],
  'man-cjk': ['manpages-ja', 'manpages-zh'],
};

/** Emoji-dense files: Debian package -> file inside it. */
const EMOJI_FILES: Record<string, string> = {
  'node-emoji': 'usr/share/nodejs/node-emoji/lib/emoji.json',
  'node-emojis-list': 'usr/share/nodejs/emojis-list/index.js',
  'python3-emoji': 'usr/lib/python3/dist-packages/emoji/unicode_codes/data_dict.py',
  'golang-github-enescakir-emoji-dev': 'usr/share/gocode/src/github.com/enescakir/emoji/map.go',
  'golang-github-kyokomi-emoji-dev': 'usr/share/gocode/src/github.com/kyokomi/emoji/v2/emoji_codemap.go',
  'golang-github-yuin-goldmark-emoji-dev': 'usr/share/gocode/src/github.com/yuin/goldmark-emoji/definition/github.go',
  'ruby-gemojione': 'usr/share/rubygems-integration/all/gems/gemojione-3.3.0/config/index.json',
  'rime-data-emoji': 'usr/share/rime-data/opencc/emoji_word.txt',
  'ruby-emot': 'usr/lib/ruby/vendor_ruby/emot/map.rb',
};

/** Commands whose output is a tool result an agent sees (run on this repository, nothing secret). */
const TOOL_COMMANDS: Record<string, string[]> = {
  'git-log-stat': ['git', '-C', REPO, 'log', '--stat', '-n', '60', '3a18a0f'],
  'git-log-graph': ['git', '-C', REPO, 'log', '--graph', '--decorate', '--format=%h %an %ad %s', '--date=iso', '-n', '300', '3a18a0f'],
  'npm-ls': ['npm', 'ls', '--all', '--prefix', REPO],
  'dpkg-l': ['dpkg', '-l'],
  'apt-cache-show': ['apt-cache', 'show', 'bash', 'coreutils', 'git', 'nodejs', 'groff-base', 'libc6', 'python3'],
  'ls-la': ['ls', '-la', '--time-style=long-iso', '/usr/bin', '/usr/lib/x86_64-linux-gnu'],
  'man-en': ['sh', '-c', 'for p in ls grep find tar git; do MANWIDTH=80 man -E UTF-8 $p 2>/dev/null | col -bx; done'],
  'grep-rn': ['grep', '-rn', '--include=*.ts', 'export', path.join(REPO, 'src')],
  'tsc-errors': ['sh', '-c', `cd ${REPO} && git show 3a18a0f:src/pipeline/guard.ts | head -400 | nl -ba`],
};

const h32 = (s: string) => crypto.createHash('sha1').update(s).digest().readUInt32BE(0);

/**
 * Translated strings of a GNU .mo catalogue (header entry skipped; plural forms joined by " / "),
 * decoded with the charset its header declares (some old catalogues are EUC-JP or KOI8-R).
 */
export function readMo(file: string): string[] {
  const b = fs.readFileSync(file);
  const le = b.readUInt32LE(0) === 0x950412de;
  if (!le && b.readUInt32BE(0) !== 0x950412de) throw new Error(`${file}: not a .mo file`);
  const read = le ? (o: number) => b.readUInt32LE(o) : (o: number) => b.readUInt32BE(o);
  const n = read(8);
  const origins = read(12);
  const translations = read(16);
  const entry = (i: number) => b.subarray(read(translations + i * 8 + 4), read(translations + i * 8 + 4) + read(translations + i * 8));
  let decoder = new TextDecoder('utf-8');
  for (let i = 0; i < n; i++) {
    if (read(origins + i * 8) !== 0) continue;
    const charset = /charset=([\w-]+)/i.exec(entry(i).toString('latin1'))?.[1];
    if (charset) decoder = new TextDecoder(charset.toLowerCase() === 'charset' ? 'utf-8' : charset);
  }
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    if (read(origins + i * 8) === 0) continue; // the header (empty msgid)
    out.push(decoder.decode(entry(i)).split('\0').join(' / '));
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

/** A window of about `len` chars at a deterministic offset, cut at line starts, surrogate pairs whole. */
function windowOf(text: string, key: string, len: number): string {
  if (text.length <= len) return text;
  let start = h32('off:' + key) % (text.length - len);
  const nl = text.indexOf('\n', start);
  if (nl >= 0 && nl - start < 300) start = nl + 1;
  let end = Math.min(text.length, start + len);
  const endNl = text.lastIndexOf('\n', end);
  if (endNl > start + len * 0.7) end = endNl + 1;
  if (/[\udc00-\udfff]/.test(text[start] ?? '')) start++;
  if (/[\ud800-\udbff]/.test(text[end - 1] ?? '')) end--;
  return text.slice(start, end);
}

/** Sample length, log-uniform in [1,300, 2,800], fixed per key. */
const lengthFor = (key: string) => Math.round(Math.exp(Math.log(1300) + (h32('len:' + key) / 0xffffffff) * Math.log(2800 / 1300)));

interface Draft {
  category: string;
  source: string;
  /** What the split is decided by (a man page name, a catalogue domain, a package, a command). */
  splitKey: string;
  text: string;
}

function manDrafts(debs: string): Draft[] {
  const out: Draft[] = [];
  for (const [category, packages] of Object.entries(MAN_PACKAGES)) {
    for (const pkg of packages) {
      const root = path.join(debs, pkg, 'usr', 'share', 'man');
      if (!fs.existsSync(root)) throw new Error(`${root} missing: apt-get download ${pkg} and dpkg-deb -x it into ${debs}/${pkg}`);
      const pages: string[] = [];
      for (const dirent of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
        if (dirent.isFile() && /\.[1-8]\.gz$/.test(dirent.name)) pages.push(path.join(dirent.parentPath, dirent.name));
      }
      // A fixed pick of pages per package: by hash, the big ones first (short pages are mostly boilerplate).
      const picked = pages
        .filter((p) => fs.statSync(p).size > 2_500)
        .sort((a, b) => h32(pkg + path.basename(a)) - h32(pkg + path.basename(b)))
        .slice(0, category === 'man-european' ? 4 : category === 'man-cyrillic' ? 7 : 12);
      for (const page of picked) {
        let text: string;
        try {
          text = execFileSync('sh', ['-c', 'MANWIDTH=80 man -E UTF-8 -l "$1" 2>/dev/null | col -bx', 'sh', page], { encoding: 'utf8', maxBuffer: 64 << 20 });
        } catch {
          continue;
        }
        if (text.length < 2_000) continue;
        const name = path.basename(page).replace(/\.gz$/, '');
        out.push({ category, source: `${pkg}:${name}`, splitKey: `man:${name}`, text });
      }
    }
  }
  return out;
}

function uiDrafts(): Draft[] {
  const out: Draft[] = [];
  for (const [category, langs] of Object.entries(UI_LANGUAGES)) {
    for (const lang of langs) {
      const dir = `/usr/share/locale/${lang}/LC_MESSAGES`;
      if (!fs.existsSync(dir)) continue;
      const min = lang === 'vi' || category === 'ui-european' ? 0.05 : 0.5;
      // iso-codes catalogues are lists of names, not UI text; skip them as the decision fixture does not
      const domains = fs.readdirSync(dir).filter((f) => f.endsWith('.mo') && !f.startsWith('iso_')).sort();
      for (const f of domains) {
        const strings = readMo(path.join(dir, f)).filter((s) => s.length >= 8 && scriptShare(s) >= min);
        const text = strings.join('\n');
        if (text.length < 1_800) continue;
        const domain = f.replace(/\.mo$/, '');
        out.push({ category, source: `${domain}:${lang}`, splitKey: `mo:${domain}`, text });
      }
    }
  }
  return out;
}

function emojiDrafts(debs: string): Draft[] {
  return Object.entries(EMOJI_FILES).map(([pkg, rel]) => {
    const file = path.join(debs, pkg, rel);
    if (!fs.existsSync(file)) throw new Error(`${file} missing: apt-get download ${pkg} and dpkg-deb -x it into ${debs}/${pkg}`);
    let text = fs.readFileSync(file, 'utf8');
    // JSON files as an API would return them: compact (one line) for one, pretty for the other
    if (rel.endsWith('.json')) text = JSON.stringify(JSON.parse(text), null, pkg === 'node-emoji' ? undefined : 2);
    return { category: 'emoji', source: pkg, splitKey: `pkg:${pkg}`, text };
  });
}

function toolDrafts(): Draft[] {
  const out: Draft[] = [];
  for (const [name, [cmd, ...args]] of Object.entries(TOOL_COMMANDS)) {
    let text: string;
    try {
      text = execFileSync(cmd!, args, { encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'ignore'] });
    } catch (err) {
      text = String((err as { stdout?: string }).stdout ?? '');
    }
    if (text.length > 2_000) out.push({ category: 'tool-output', source: name, splitKey: `cmd:${name}`, text });
  }
  return out;
}

/** Windows per document, and the most per category, so no category dominates the fixture. */
const WINDOWS_PER_DOC: Record<string, number> = { emoji: 6, 'tool-output': 5, 'man-greek': 6, 'man-vietnamese': 2 };
const MAX_PER_CATEGORY = 21;

function toSamples(drafts: Draft[]): ExtraSample[] {
  const samples: ExtraSample[] = [];
  const categories = [...new Set(drafts.map((d) => d.category))];
  for (const category of categories) {
    const docs = drafts.filter((d) => d.category === category);
    // one in three split keys to the holdout, in hash order, so both sides always have some
    const keys = [...new Set(docs.map((d) => d.splitKey))].sort((a, b) => h32(a) - h32(b));
    const side = new Map(keys.map((k, i) => [k, i % 3 === 1 ? ('holdout' as const) : ('train' as const)]));
    const out: ExtraSample[] = [];
    const ordered = docs.sort((a, b) => h32(a.source) - h32(b.source));
    const windows = WINDOWS_PER_DOC[category] ?? 1;
    for (let w = 0; w < windows; w++) {
      for (const d of ordered) {
        const key = `${d.source}#${w}`;
        const text = windowOf(d.text, key, lengthFor(key));
        if (text.length < 1_000 || out.some((s) => s.text === text)) continue;
        out.push({ category, source: d.source, split: side.get(d.splitKey)!, text });
      }
    }
    // keep the category small but with both sides: the first N in the order above
    const train = out.filter((s) => s.split === 'train').slice(0, Math.ceil((MAX_PER_CATEGORY * 2) / 3));
    const holdout = out.filter((s) => s.split === 'holdout').slice(0, Math.floor(MAX_PER_CATEGORY / 3));
    samples.push(...train, ...holdout);
  }
  return samples;
}

const TARGET_CHARS = 3_000;

/** GTK's catalogue first; where it is thin (Amharic, Kyrgyz, Urdu), the language's other catalogues in name order. */
function moreScripts(lang: string): string {
  const dir = `/usr/share/locale/${lang}/LC_MESSAGES`;
  const files = ['gtk30.mo', ...fs.readdirSync(dir).filter((f) => f.endsWith('.mo') && f !== 'gtk30.mo').sort()];
  // Vietnamese is Latin with diacritics: most of its letters are ASCII, so ask for fewer.
  const min = lang === 'vi' ? 0.3 : 0.6;
  const picked: string[] = [];
  let n = 0;
  for (const f of files) {
    if (n >= TARGET_CHARS) break;
    for (const s of readMo(path.join(dir, f))) {
      if (s.length < 8 || scriptShare(s) < min) continue;
      picked.push(s);
      n += s.length + 1;
      if (n >= TARGET_CHARS) break;
    }
  }
  return picked.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const i = process.argv.indexOf('--debs');
  const debs = i > 0 ? process.argv[i + 1]! : '/tmp/spillway-debs';
  if (process.argv.includes('--more-scripts')) {
    const out = Object.fromEntries(Object.keys(LANGUAGES).map((lang) => [lang, moreScripts(lang)]));
    fs.writeFileSync(path.join(FIXTURES, 'more-scripts.json'), JSON.stringify(out, null, 1) + '\n');
  }
  const samples = toSamples([...manDrafts(debs), ...uiDrafts(), ...emojiDrafts(debs), ...toolDrafts()]);
  const json = JSON.stringify(samples);
  fs.writeFileSync(EXTRA_CORPUS_FILE, zlib.gzipSync(json, { level: 9 }));
  for (const c of [...new Set(samples.map((s) => s.category))]) {
    const s = samples.filter((x) => x.category === c);
    console.log(`${c.padEnd(20)} train ${String(s.filter((x) => x.split === 'train').length).padStart(3)}  holdout ${String(s.filter((x) => x.split === 'holdout').length).padStart(3)}  sources ${new Set(s.map((x) => x.source)).size}`);
  }
  console.log(`${samples.length} samples, ${(json.length / 1024).toFixed(0)} K chars of JSON, ${(fs.statSync(EXTRA_CORPUS_FILE).size / 1024).toFixed(0)} KB gzipped`);
}
