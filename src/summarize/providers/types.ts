/** One provider call, as the summarizer hands it to a provider module. */
export interface CompletionRequest {
  system: string;
  user: string;
  model: string;
  /** Sent to the API as its output cap. */
  maxTokens: number;
  /** Cut the reply locally past this many chars, whatever the server does. */
  maxChars: number;
  maxResponseBytes: number;
  apiKey?: string;
  baseURL?: string;
  stream: boolean;
  signal: AbortSignal;
  timeoutMs: number;
}

export interface Completion {
  text: string;
  /** Cut at the output cap (locally or by the server). */
  truncated: boolean;
  inputTokens?: number;
  outputTokens?: number;
  model: string;
}
