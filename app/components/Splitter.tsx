import { useCallback, useRef, type KeyboardEvent, type PointerEvent } from 'react';

/** A draggable (and keyboard-movable) divider between two panes. */
export function Splitter({ value, onChange, min, max, label, invert = false }: { value: number; onChange: (px: number) => void; min: number; max: number; label: string; invert?: boolean }) {
  const start = useRef<{ x: number; v: number } | null>(null);
  const clamp = useCallback((v: number) => Math.max(min, Math.min(max, v)), [min, max]);
  const onDown = (e: PointerEvent<HTMLDivElement>) => {
    e.currentTarget.setPointerCapture(e.pointerId);
    start.current = { x: e.clientX, v: value };
  };
  const onMove = (e: PointerEvent<HTMLDivElement>) => {
    if (!start.current) return;
    const dx = e.clientX - start.current.x;
    onChange(clamp(start.current.v + (invert ? -dx : dx)));
  };
  const onKey = (e: KeyboardEvent) => {
    const step = e.shiftKey ? 64 : 16;
    if (e.key === 'ArrowLeft') onChange(clamp(value + (invert ? step : -step)));
    else if (e.key === 'ArrowRight') onChange(clamp(value + (invert ? -step : step)));
    else return;
    e.preventDefault();
  };
  return (
    <div
      className="splitter"
      role="separator"
      aria-orientation="vertical"
      aria-label={label}
      aria-valuenow={Math.round(value)}
      aria-valuemin={min}
      aria-valuemax={max}
      tabIndex={0}
      onPointerDown={onDown}
      onPointerMove={onMove}
      onPointerUp={() => (start.current = null)}
      onKeyDown={onKey}
    />
  );
}
