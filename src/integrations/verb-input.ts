import { PROFILES, PROVIDER_NAMES, STRATEGY_NAMES, type Profile, type StrategyName } from '../pipeline/vocab.js';

/**
 * What the guarding verbs (`guard`, `mcp`, `hook`) read, without commander: their flags, as one
 * table, and the hook's stdin. A light leaf (it imports only the shared words), because the hook's
 * entry (src/cli/hook-entry.ts) loads it on every tool call.
 *
 * | what                 | who calls it                                                          |
 * | -------------------- | --------------------------------------------------------------------- |
 * | GUARD_FLAGS, ...     | options.ts builds commander's options from them; the hook entry reads  |
 * | readFlags            | the hook entry: a command line as commander would read it, or nothing |
 * | readHookStdin        | every hook: the stdin, read once per process                          |
 * | HookEvent            | every hook: that stdin, parsed once                                   |
 *
 * A flag, its key and the values it takes are written once, here: the two readers cannot drift.
 */

/** The flags of the guarding verbs (`guard`, `mcp`, `hook`), as commander hands them to an action. */
export interface GuardCliOptions {
  session?: string;
  limit?: number;
  contextWindow?: number;
  summarizer?: string;
  provider?: string;
  model?: string;
  template?: string;
  focusArg?: string;
  profile?: Profile;
  strategy?: StrategyName;
  store?: string;
  cutMedia?: boolean;
}

/** A value a flag refuses; commander prints the message as a usage error (exit 2). */
export class FlagValueError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlagValueError';
  }
}

/** One flag: commander's syntax, the key it is stored under, its help, and what it makes of a value. */
export interface GuardFlag {
  /** `--limit <tokens>`; a switch (no `<value>`) stores true. */
  readonly flags: string;
  readonly key: keyof GuardCliOptions;
  /** The verb's default profile goes into the help where it matters. */
  readonly help: (defaultProfile: Profile) => string;
  /** The value as stored, or a {@link FlagValueError}; absent: the text as given. */
  readonly parse?: (value: string) => unknown;
}

/** A whole number > 0, or the usage error every verb gives. */
export function positiveWhole(flag: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n <= 0) throw new FlagValueError(`${flag} must be a positive whole number, got ${JSON.stringify(v)}.`);
    return n;
  };
}

/** One of `allowed`, or the usage error every verb gives. */
export function oneOfValues<T extends string>(flag: string, allowed: readonly T[]) {
  return (v: string): T => {
    if (!(allowed as readonly string[]).includes(v)) throw new FlagValueError(`${flag} must be one of ${allowed.join(', ')}.`);
    return v as T;
  };
}

const text = (help: string) => () => help;

export const SESSION_FLAG: GuardFlag = { flags: '--session <dir>', key: 'session', help: text('session folder for spilled payloads') };

/** The limit, how it is measured and what writes the summary: every guarding verb's, in help order. */
export const LIMIT_FLAGS: readonly GuardFlag[] = [
  {
    flags: '--store <url>',
    key: 'store',
    help: text('where spills go: s3://bucket/prefix (default $SPILLWAY_STORE, else the session folder); falls back to the session folder when the bucket is down'),
  },
  { flags: '--limit <tokens>', key: 'limit', help: text('token limit above which a result is spilled (default 12000)'), parse: positiveWhole('--limit') },
  {
    flags: '--context-window <tokens>',
    key: 'contextWindow',
    help: text("the model's context window; the limit becomes 10% of it, between 2000 and 12000"),
    parse: positiveWhole('--context-window'),
  },
  {
    flags: '--profile <profile>',
    key: 'profile',
    help: (d) => `tokenizer family the limit is measured with: ${PROFILES.join(', ')} (default ${d})`,
    parse: oneOfValues('--profile', PROFILES),
  },
  {
    flags: '--strategy <name>',
    key: 'strategy',
    help: text(`estimation strategy: ${STRATEGY_NAMES.join(', ')} (default calibrated, counted exactly near the limit)`),
    parse: oneOfValues('--strategy', STRATEGY_NAMES),
  },
  // No check at parse time: the summarizer is loaded (and an unknown name refused) when the verb runs.
  {
    flags: '--summarizer <provider>',
    key: 'summarizer',
    help: text(
      'summarize spilled results with: structural, anthropic, openai, local (an OpenAI-compatible server at $SPILLWAY_LOCAL_BASE_URL, by default Ollama at 127.0.0.1:11434), or none (a preview); default $SPILLWAY_SUMMARIZER or structural',
    ),
  },
  { flags: '--provider <provider>', key: 'provider', help: text('same as --summarizer') },
  { flags: '--model <model>', key: 'model', help: text("the summarizer's model") },
  { flags: '--template <name>', key: 'template', help: text('summary prompt template name') },
  { flags: '--cut-media', key: 'cutMedia', help: text('also cut MCP image/audio blocks out of results that fit the limit (for clients that show the model media as text)') },
];

export const FOCUS_ARG_FLAG: GuardFlag = { flags: '--focus-arg <name>', key: 'focusArg', help: text("a tool argument that carries the caller's focus (intent)") };

/** The flags of the verbs that guard an agent's stream of results (`mcp`, `hook`), in help order. */
export const GUARD_FLAGS: readonly GuardFlag[] = [SESSION_FLAG, ...LIMIT_FLAGS, FOCUS_ARG_FLAG];

/** The long name of a flag (`--limit`), and whether it takes a value. */
const nameOf = (f: GuardFlag) => f.flags.split(' ')[0]!;
const takesValue = (f: GuardFlag) => f.flags.includes('<');

/** `--summarizer` / `--provider` values that mean no summary (a preview instead). */
export const NO_SUMMARIZER_NAMES = ['none', 'off'] as const;

/** Whether the summarizer the flags name is one the verb can load (no flag: the default, always loadable). */
export function summarizerKnown(o: Pick<GuardCliOptions, 'summarizer' | 'provider'>): boolean {
  const name = o.summarizer ?? o.provider;
  return name === undefined || (NO_SUMMARIZER_NAMES as readonly string[]).includes(name) || (PROVIDER_NAMES as readonly string[]).includes(name);
}

/**
 * `args` read as commander reads a command that has exactly `flags` and no arguments (a repeated
 * flag: the last one), or undefined when commander must read them: a flag not listed, a value it
 * refuses, help, a stray argument, a value that looks like a flag, `--switch=x`.
 */
export function readFlags(args: readonly string[], flags: readonly GuardFlag[] = GUARD_FLAGS): GuardCliOptions | undefined {
  const byName = new Map(flags.map((f) => [nameOf(f), f]));
  const out: Record<string, unknown> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const eq = a.indexOf('=');
    const name = a.startsWith('--') && eq > 2 ? a.slice(0, eq) : a;
    const flag = byName.get(name);
    if (!flag) return undefined;
    if (!takesValue(flag)) {
      if (name !== a) return undefined;
      out[flag.key] = true;
      continue;
    }
    let value: string | undefined;
    if (name !== a) value = a.slice(eq + 1);
    else {
      value = args[++i];
      if (value === undefined || value.startsWith('-')) return undefined;
    }
    try {
      out[flag.key] = flag.parse ? flag.parse(value) : value;
    } catch {
      return undefined;
    }
  }
  return out as GuardCliOptions;
}

/** Hook input larger than this is not read whole: a client may send a huge tool response. */
export const MAX_HOOK_INPUT_BYTES = 512 * 1024 * 1024;

/**
 * Stdin can be read once per process. The read is kept on the process, not in this module, so a
 * second copy of the module (the source run through tsx beside the built one) still finds it
 * instead of reading an empty stream.
 */
const STDIN_KEY = Symbol.for('spillway.hook.stdin');

async function readAll(): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of process.stdin) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    bytes += b.length;
    if (bytes > MAX_HOOK_INPUT_BYTES) return undefined;
    chunks.push(b);
  }
  return Buffer.concat(chunks, bytes).toString('utf8');
}

/** The hook's stdin, read once: undefined when it is over {@link MAX_HOOK_INPUT_BYTES}. */
export function readHookStdin(): Promise<string | undefined> {
  const g = globalThis as { [STDIN_KEY]?: Promise<string | undefined> };
  return (g[STDIN_KEY] ??= readAll());
}

/**
 * One hook event: the text a client sent, parsed once, on first use, by whoever needs it first
 * (the entry's pass check, then the client's hook, get the same value).
 */
export class HookEvent {
  #parsed: { ok: true; value: unknown } | { ok: false; error: unknown } | undefined;
  constructor(readonly text: string) {}

  /** The parsed JSON, or what JSON.parse threw. */
  get parsed(): { ok: true; value: unknown } | { ok: false; error: unknown } {
    if (!this.#parsed) {
      try {
        this.#parsed = { ok: true, value: JSON.parse(this.text) as unknown };
      } catch (error) {
        this.#parsed = { ok: false, error };
      }
    }
    return this.#parsed;
  }
}
