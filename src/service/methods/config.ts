/**
 * The guard rules files, written from the inspector: previewConfig, applyConfig (docs/config.md).
 *
 * | method | does |
 * | --- | --- |
 * | previewConfig | the file's text now and after one change, a unified diff, the tool's effective rule before and after |
 * | applyConfig | writes exactly the previewed text, only while the file is as previewed (else CONFLICT) |
 *
 * One implementation with `spillway config set`: the change is planned and written by
 * src/integrations/rules/config.ts (planRuleChange, writeRulesPlan), so the validation, the atomic
 * write, 0600 for a new user file, an existing file's mode and the refusal of another account's file
 * are the same. The project folder arrives over IPC or HTTP: it must be one the inspector already
 * knows (an indexed session's project folder, or a root the user gave), and the project's file may
 * not lead out of it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { createTwoFilesPatch } from 'diff';
import { loadRules, resolveRule, ruleKeyTarget, RULE_KEYS, withRulesText, type LoadedRules, type RulesScope } from '../../integrations/rules/index.js';
import { planRuleChange, rulesTextHash, RulesWriteError, writeRulesPlan, type RulesPlan } from '../../integrations/rules/config.js';
import { PROJECT_RULES_FILE } from '../../pipeline/config.js';
import { isInside } from '../../pipeline/index.js';
import { ServiceError, type ApplyConfigResponse, type EffectiveRule, type PreviewConfigRequest, type PreviewConfigResponse } from '../contract.js';
import type { Handlers, ServiceContext } from '../context.js';
import { checkPathText } from '../paths.js';
import { rootNeedsConsent } from '../roots-policy.js';

export type ConfigMethodName = 'previewConfig' | 'applyConfig';

/** Lines of context around each change in the diff, as `diff -u`. */
const DIFF_CONTEXT_LINES = 3;

const realOf = (p: string): string | undefined => {
  try {
    return fs.realpathSync.native(p);
  } catch {
    return undefined;
  }
};

function toServiceErr(err: unknown): unknown {
  if (!(err instanceof RulesWriteError)) return err;
  if (err.code === 'STALE') return new ServiceError('CONFLICT', err.message);
  if (err.code === 'FOREIGN') return new ServiceError('FORBIDDEN_PATH', err.message);
  return new ServiceError('BAD_REQUEST', err.message);
}

export function configMethods(ctx: ServiceContext) {
  /** The rules files' own environment: the user's file is this service's app data (`--app-data` or SPILLWAY_HOME). */
  const rulesEnv = (): NodeJS.ProcessEnv => ({ ...ctx.env, SPILLWAY_HOME: ctx.paths.root });

  /**
   * A project folder named by the caller, as its real path, when the inspector knows it: the
   * project folder of an indexed session, or a root the user gave (a consent record). Anything
   * else is refused: the caller may be a page, and a path it names is not the user's word.
   */
  const knownProject = async (given: string): Promise<string> => {
    checkPathText(given, 'project');
    if (!path.isAbsolute(given)) throw new ServiceError('BAD_REQUEST', `the project folder must be an absolute path: ${JSON.stringify(given)}`);
    const real = realOf(given);
    if (!real) throw new ServiceError('NOT_FOUND', `no such folder: ${given}`);
    if (!fs.statSync(real).isDirectory()) throw new ServiceError('BAD_REQUEST', `not a folder: ${given}`);
    const index = await ctx.idx();
    const projects = new Set<string>();
    for (const s of index.listSessions({})) if (s.project) projects.add(s.project);
    let known = [...projects].some((p) => p === real || (path.isAbsolute(p) && realOf(p) === real));
    if (!known) known = index.listRoots().some((r) => r.path === real && rootNeedsConsent(r, ctx.rootPolicy) && ctx.hasRecordedConsent(real));
    if (!known) {
      throw new ServiceError('FORBIDDEN_PATH', `${real} is not the project folder of an indexed session nor a root you gave: the inspector writes rules only there (or use \`spillway config set --project\` in that folder)`);
    }
    return real;
  };

  /** The file a scope names; a project's `.spillway.json` may be a link, but not to a file outside the project. */
  const fileOf = (scope: RulesScope, project: string | undefined): string => {
    if (scope === 'user') return ctx.paths.config;
    const file = path.join(project!, PROJECT_RULES_FILE);
    const st = fs.lstatSync(file, { throwIfNoEntry: false });
    if (st?.isSymbolicLink()) {
      const target = realOf(file);
      if (!target || !isInside(project!, target)) throw new ServiceError('FORBIDDEN_PATH', `${file} is a link that leads out of the project folder: edit it by hand (nothing was written)`);
    }
    return file;
  };

  const effective = (loaded: LoadedRules, tool: string): EffectiveRule => {
    const r = resolveRule(loaded, ruleKeyTarget(tool));
    const settings = {} as EffectiveRule['settings'];
    for (const k of RULE_KEYS) settings[k] = { value: r.values[k] ?? null, ...r.origins[k] };
    return { tool, settings };
  };

  /** The plan of a request and everything the preview shows of it. */
  const prepare = async (req: PreviewConfigRequest): Promise<{ plan: RulesPlan; preview: PreviewConfigResponse }> => {
    const project = req.project !== undefined ? await knownProject(req.project) : undefined;
    const file = fileOf(req.scope, project);
    const { tool, set, unset } = req.change;
    let plan: RulesPlan;
    try {
      plan = planRuleChange(file, { match: tool, ...(set ? { set } : {}), ...(unset ? { unset } : {}) });
    } catch (err) {
      throw toServiceErr(err);
    }
    const loaded = await loadRules(project, rulesEnv());
    const after = await withRulesText(loaded, req.scope, file, plan.nextText);
    const diff = plan.currentText === plan.nextText ? '' : createTwoFilesPatch(plan.exists ? file : '/dev/null', file, plan.currentText, plan.nextText, '', '', { context: DIFF_CONTEXT_LINES });
    return {
      plan,
      preview: {
        scope: req.scope,
        ...(project ? { project } : {}),
        file,
        exists: plan.exists,
        currentText: plan.currentText,
        proposedText: plan.nextText,
        diff,
        baseHash: plan.baseHash,
        proposedHash: rulesTextHash(plan.nextText),
        unchanged: plan.exists && plan.currentText === plan.nextText,
        before: effective(loaded, tool),
        after: effective(after, tool),
        notes: loaded.errors,
      },
    };
  };

  const methods: Handlers<ConfigMethodName> = {
    async previewConfig(req) {
      return (await prepare(req)).preview;
    },

    async applyConfig(req) {
      const { plan, preview } = await prepare(req);
      // The file was read again just now: another write since the preview shows as another hash.
      if (plan.baseHash !== req.baseHash) throw new ServiceError('CONFLICT', `${plan.file} changed since the preview: preview again (nothing was written)`);
      if (preview.proposedHash !== req.proposedHash) throw new ServiceError('CONFLICT', `the change no longer gives the previewed text for ${plan.file}: preview again (nothing was written)`);
      let written: string;
      try {
        written = writeRulesPlan(plan, { privateNew: req.scope === 'user' });
      } catch (err) {
        throw toServiceErr(err);
      }
      const loaded = await loadRules(preview.project, rulesEnv());
      const res: ApplyConfigResponse = {
        file: written,
        created: !plan.exists,
        mode: `0${(fs.statSync(written).mode & 0o777).toString(8)}`,
        text: plan.nextText,
        effective: effective(loaded, req.change.tool),
      };
      return res;
    },
  };
  return methods;
}
