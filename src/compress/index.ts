/**
 * Compression layers 1 and 3: schema projection and reference handles (plus drill-down over
 * saved payload files). Layer 2 (summaries) lives in src/summarize.
 */
export {
  project,
  projectWithStats,
  suggestProjection,
  loadProjectionSpecs,
  findProjectionSpec,
  saveProjectionSpec,
  validateSpec,
  ProjectionSpecError,
  MAX_SPEC_FILE_BYTES,
  type ProjectionSpec,
  type ProjectionStats,
  type ProjectionSuggestion,
  type FieldCost,
} from './projection.js';
export { parsePath, formatPath, PathSyntaxError, type Segment } from './jsonpath.js';
export {
  HandleStore,
  HandleError,
  HANDLES_DB_FILE,
  HANDLE_TTL_MS,
  MAX_QUERY_LIMIT,
  MAX_QUERY_RESULT_CHARS,
  DEFAULT_QUERY_LIMIT,
  type PutOptions,
  type PutReceipt,
  type QueryResult,
  type GrepMatch,
  type GrepResult,
  type HandleInfo,
} from './handles.js';
export { parseCondition, parseAggregate, parseSort, QueryError, type HandleQuery, type Condition, type Op, type Aggregate } from './query.js';
export { readSlice, grepFile, MAX_SLICE_BYTES, MAX_SLICE_LINES, type Slice, type SliceRequest, type FileGrepResult, type FileGrepMatch } from './drill.js';
export { makeMatcher, checkRegexSafety, PatternError, MAX_PATTERN_CHARS, MAX_REGEX_LINE_CHARS, type MatchOptions } from './match.js';
export { shape, parseCsv } from './tabular.js';
