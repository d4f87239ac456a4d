import { useCallback, useEffect, useState } from 'react';
import { useAppStore } from '../store/react.js';
import { fileToBase64, MAX_UPLOAD_BYTES } from '../lib/files.js';
import { formatBytes } from '../lib/format.js';
import { errMessage } from '../../src/pipeline/values.js';

/** Analyse one File: by path in Electron (nothing is copied), else its bytes as base64. */
export function useAnalyzeFile() {
  const store = useAppStore();
  return useCallback(
    async (file: File) => {
      const s = store.getState();
      // A folder dropped on the desktop window becomes a root: the drop is the user's consent.
      const folder = store.deps.host?.folderForFile?.(file);
      if (folder) return void (await s.addRoot(folder));
      const path = store.deps.host?.pathForFile(file);
      if (path) return s.analyze({ name: file.name, path });
      if (file.size > MAX_UPLOAD_BYTES) {
        s.notify('error', `${file.name} is ${formatBytes(file.size)}; the browser version analyses files up to ${formatBytes(MAX_UPLOAD_BYTES)}. Use the desktop app or \`spillway estimate\`.`);
        return;
      }
      s.setView('analyze');
      store.setState({ analysisLoading: true, analysisName: file.name, analysis: null, analysisError: null });
      try {
        const base64 = await fileToBase64(file);
        await s.analyze({ name: file.name, base64 });
      } catch (err) {
        store.setState({ analysisLoading: false, analysisError: errMessage(err) });
      }
    },
    [store],
  );
}

const isEditable = (el: EventTarget | null) =>
  el instanceof HTMLElement && (el.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(el.tagName) || !!el.closest('.monaco-editor'));

/** Window-wide drop target and paste handler: anything dropped or pasted (outside a text field) is analysed. */
export function DropOverlay() {
  const [over, setOver] = useState(false);
  const analyzeFile = useAnalyzeFile();
  const store = useAppStore();
  useEffect(() => {
    let depth = 0;
    const hasFiles = (e: DragEvent) => Array.from(e.dataTransfer?.types ?? []).includes('Files');
    const enter = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      depth++;
      setOver(true);
    };
    const overFn = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      e.preventDefault();
      if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
    };
    const leave = (e: DragEvent) => {
      if (!hasFiles(e)) return;
      depth = Math.max(0, depth - 1);
      if (depth === 0) setOver(false);
    };
    const drop = (e: DragEvent) => {
      // Always prevent the default: a dropped file must never navigate the window away.
      e.preventDefault();
      depth = 0;
      setOver(false);
      const file = e.dataTransfer?.files?.[0];
      if (file) void analyzeFile(file);
    };
    const paste = (e: ClipboardEvent) => {
      if (isEditable(e.target) || isEditable(document.activeElement)) return;
      const file = e.clipboardData?.files?.[0];
      if (file) {
        e.preventDefault();
        void analyzeFile(file);
        return;
      }
      const text = e.clipboardData?.getData('text/plain');
      if (text && text.trim()) {
        e.preventDefault();
        void store.getState().analyze({ name: 'pasted text', text });
      }
    };
    window.addEventListener('dragenter', enter);
    window.addEventListener('dragover', overFn);
    window.addEventListener('dragleave', leave);
    window.addEventListener('drop', drop);
    window.addEventListener('paste', paste);
    return () => {
      window.removeEventListener('dragenter', enter);
      window.removeEventListener('dragover', overFn);
      window.removeEventListener('dragleave', leave);
      window.removeEventListener('drop', drop);
      window.removeEventListener('paste', paste);
    };
  }, [analyzeFile, store]);
  if (!over) return null;
  return (
    <div className="drop-overlay" aria-hidden>
      <div className="drop-card">
        <svg viewBox="0 0 24 24"><path d="M12 3v12m0 0l-4-4m4 4l4-4M4 17v2a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2v-2" /></svg>
        <strong>Drop to analyse</strong>
        <span>Type, assets, estimates and what the guard would do. The file is not modified.</span>
      </div>
    </div>
  );
}
