import { lazy, Suspense } from 'react';
import type { MonacoViewProps } from './MonacoView.js';

const MonacoView = lazy(() => import('./MonacoView.js'));

/** Monaco, code-split: the shell renders first; the editor chunk streams in. */
export function Editor(props: MonacoViewProps) {
  return (
    <Suspense fallback={<div className="editor-loading">Loading editor…</div>}>
      <MonacoView {...props} />
    </Suspense>
  );
}
export type { MonacoViewProps };
