import { useSyncExternalStore } from 'react';

/** Light/dark follows the OS (prefers-color-scheme); no in-app switch to drift out of sync. */
const QUERY = '(prefers-color-scheme: dark)';

function subscribe(cb: () => void): () => void {
  if (typeof window === 'undefined' || !window.matchMedia) return () => {};
  const mq = window.matchMedia(QUERY);
  mq.addEventListener('change', cb);
  return () => mq.removeEventListener('change', cb);
}

export function prefersDark(): boolean {
  return typeof window !== 'undefined' && !!window.matchMedia && window.matchMedia(QUERY).matches;
}

export function useDarkMode(): boolean {
  return useSyncExternalStore(subscribe, prefersDark, () => false);
}

export const monacoTheme = (dark: boolean) => (dark ? 'spillway-dark' : 'spillway-light');
