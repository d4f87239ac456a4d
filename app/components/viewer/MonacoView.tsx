/**
 * Monaco behind one small component. Loaded lazily (see Editor.tsx) so the rest of the UI is up
 * before the editor's code is parsed.
 */
import { Editor, type OnMount } from '@monaco-editor/react';
import { useEffect, useRef } from 'react';
import { monaco } from '../../lib/monaco.js';
import { monacoTheme, useDarkMode } from '../../lib/theme.js';

export type MonacoEditor = monaco.editor.IStandaloneCodeEditor;

export interface MonacoViewProps {
  /** Controlled text; when `onEditor` manages the model itself, leave undefined. */
  value?: string;
  language?: string;
  readOnly?: boolean;
  wordWrap?: boolean;
  lineNumbers?: boolean;
  minimap?: boolean;
  onChange?: (value: string) => void;
  onEditor?: (editor: MonacoEditor, m: typeof monaco) => void;
  ariaLabel?: string;
}

export default function MonacoView(props: MonacoViewProps) {
  const dark = useDarkMode();
  const onChange = useRef(props.onChange);
  onChange.current = props.onChange;
  const onMount: OnMount = (editor) => {
    props.onEditor?.(editor as unknown as MonacoEditor, monaco);
  };
  useEffect(() => {
    monaco.editor.setTheme(monacoTheme(dark));
  }, [dark]);
  return (
    <Editor
      height="100%"
      theme={monacoTheme(dark)}
      language={props.language ?? 'plaintext'}
      value={props.value}
      onChange={(v) => onChange.current?.(v ?? '')}
      onMount={onMount}
      loading={<div className="editor-loading">Loading editor…</div>}
      options={{
        readOnly: props.readOnly ?? true,
        domReadOnly: props.readOnly ?? true,
        wordWrap: props.wordWrap === false ? 'off' : 'on',
        minimap: { enabled: props.minimap ?? false },
        lineNumbers: props.lineNumbers === false ? 'off' : 'on',
        scrollBeyondLastLine: false,
        fontSize: 12.5,
        lineHeight: 19,
        fontFamily: 'var(--font-mono)',
        renderWhitespace: 'none',
        automaticLayout: true,
        folding: true,
        links: false,
        contextmenu: true,
        largeFileOptimizations: true,
        stopRenderingLineAfter: 20_000,
        maxTokenizationLineLength: 20_000,
        occurrencesHighlight: 'off',
        renderValidationDecorations: 'off',
        padding: { top: 6, bottom: 6 },
        ariaLabel: props.ariaLabel,
        scrollbar: { verticalScrollbarSize: 12, horizontalScrollbarSize: 12 },
      }}
    />
  );
}
