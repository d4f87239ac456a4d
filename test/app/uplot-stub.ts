/** jsdom draws no canvas: uPlot's stand-in for the renderer's tests (the e2e walks draw the real chart). */
export default class {
  over = document.createElement('div');
  cursor = { idx: null };
  constructor(_o: unknown, _d: unknown, el: HTMLElement) {
    el.appendChild(this.over);
  }
  setData() {}
  destroy() {}
}
