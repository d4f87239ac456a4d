/** jsdom lacks a few browser APIs the renderer uses; these are the smallest faithful stand-ins. */
import { afterEach } from 'vitest';
import { cleanup } from '@testing-library/react';

afterEach(() => cleanup());

if (typeof window !== 'undefined') {
  window.matchMedia ??= ((query: string) => ({
    matches: false,
    media: query,
    onchange: null,
    addEventListener() {},
    removeEventListener() {},
    addListener() {},
    removeListener() {},
    dispatchEvent: () => false,
  })) as unknown as typeof window.matchMedia;
  (globalThis as { ResizeObserver?: unknown }).ResizeObserver ??= class {
    observe() {}
    unobserve() {}
    disconnect() {}
  };
  // jsdom does no layout: give the payload table's scroll pane a typical size so the virtualizer renders rows.
  const isTable = (el: Element) => el instanceof HTMLElement && el.dataset.testid === 'payload-table';
  const clientHeight = Object.getOwnPropertyDescriptor(Element.prototype, 'clientHeight')!;
  const clientWidth = Object.getOwnPropertyDescriptor(Element.prototype, 'clientWidth')!;
  Object.defineProperty(HTMLElement.prototype, 'clientHeight', {
    configurable: true,
    get(this: Element) {
      return isTable(this) ? 800 : clientHeight.get!.call(this);
    },
  });
  Object.defineProperty(HTMLElement.prototype, 'clientWidth', {
    configurable: true,
    get(this: Element) {
      return isTable(this) ? 600 : clientWidth.get!.call(this);
    },
  });
  Element.prototype.scrollIntoView ??= function scrollIntoView() {};
  Element.prototype.scrollTo ??= function scrollTo() {};
}
