import { useState } from 'react';

/** A positive number kept in localStorage under `key` (a pane's width the user dragged), else `initial`. */
export function usePersistentNumber(key: string, initial: number): [number, (v: number) => void] {
  const [v, setV] = useState(() => {
    try {
      const n = Number(localStorage.getItem(key));
      return Number.isFinite(n) && n > 0 ? n : initial;
    } catch {
      return initial;
    }
  });
  const set = (n: number) => {
    setV(n);
    try {
      localStorage.setItem(key, String(Math.round(n)));
    } catch {
      /* private mode */
    }
  };
  return [v, set];
}
