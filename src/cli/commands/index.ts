import type { Command } from 'commander';
import { register as guard } from './guard.js';
import { register as estimate } from './estimate.js';
import { register as restore } from './restore.js';
import { register as summarize } from './summarize.js';
import { register as project } from './project.js';
import { register as handle } from './handle.js';
import { register as index } from './index-cmd.js';
import { register as serve } from './serve.js';
import { register as mcp } from './mcp.js';
import { register as hook } from './hook.js';
import { register as setup } from './setup.js';
import { register as sync } from './sync.js';
import { register as context } from './context.js';
import { register as evidence } from './evidence.js';
import { register as prune } from './prune.js';
import { register as config } from './config.js';
import { register as experiment } from './experiment.js';

/** Every verb, in help order. README's CLI section must list the same verbs (consistency test). */
export const COMMANDS: Array<(program: Command) => void> = [
  guard,
  estimate,
  restore,
  summarize,
  project,
  handle,
  index,
  context,
  evidence,
  experiment,
  serve,
  mcp,
  hook,
  setup,
  config,
  sync,
  prune,
];
