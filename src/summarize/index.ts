/**
 * Layer 2: summaries with a focus. Offline structural summaries, Anthropic and OpenAI-compatible
 * providers behind one Summarizer interface (src/pipeline/types.ts), prompt templates, map-reduce
 * for payloads larger than a model's window.
 */
export { createSummarizer, listProviders, listProvidersProbed, chunkText, isProviderName, DEFAULT_MODELS, PRICING, costOf } from './summarizer.js';
export { structuralSummary, type StructuralOptions } from './structural/index.js';
export { defaultProviderName, defaultSummarizer } from './default.js';
export { isMcpEnvelope, mcpContentText, mcpContentValue } from './mcp.js';
export {
  listTemplates,
  loadTemplate,
  saveTemplate,
  deleteTemplate,
  validateTemplateName,
  TemplateError,
  BUILT_IN_TEMPLATES,
  DEFAULT_TEMPLATE,
} from './templates.js';
export { renderPrompt, SYSTEM_PROMPT, type BuiltPrompt, type PromptVars } from './prompt.js';
export { ProviderError, retryAfterMs, type ProviderErrorKind } from './providers/http.js';
export { ANTHROPIC_DEFAULT_MODEL } from './providers/anthropic.js';
export { OPENAI_DEFAULT_MODEL } from './providers/openai.js';
export { probeLocal } from './providers/local.js';
export { focusTerms, type FocusTerm } from './focus.js';
export * from './types.js';
export * as summarizeLimits from './limits.js';
