import type { EventName, InspectorEvents } from './contract.js';

type Listener<E extends EventName> = (payload: InspectorEvents[E]) => void;

/**
 * A tiny typed emitter for the contract's events. A listener that throws is reported once to
 * `onListenerError` and never stops the others (one broken SSE client must not starve the rest).
 */
export class InspectorEmitter {
  private readonly listeners = new Map<EventName, Set<Listener<EventName>>>();

  constructor(private readonly onListenerError: (err: unknown) => void = () => undefined) {}

  on<E extends EventName>(event: E, listener: Listener<E>): () => void {
    let set = this.listeners.get(event);
    if (!set) this.listeners.set(event, (set = new Set()));
    const l = listener as Listener<EventName>;
    set.add(l);
    return () => {
      set.delete(l);
    };
  }

  emit<E extends EventName>(event: E, payload: InspectorEvents[E]): void {
    for (const l of [...(this.listeners.get(event) ?? [])]) {
      try {
        l(payload);
      } catch (err) {
        this.onListenerError(err);
      }
    }
  }

  listenerCount(event: EventName): number {
    return this.listeners.get(event)?.size ?? 0;
  }

  clear(): void {
    this.listeners.clear();
  }
}
