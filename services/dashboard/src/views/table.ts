/**
 * The data table every list page shows: scrollable on its own on a narrow screen (a focusable
 * region, so a keyboard can scroll it), a caption, column headers, and rows the page renders.
 */
import type { Html } from './html.ts';
import { html } from './html.ts';

type Cell = Html | string;

export interface DataTable {
  /** The region's accessible name. */
  label: string;
  caption: string;
  /** Column headers. */
  columns: readonly Cell[];
  /** One `<tr>` each. */
  rows: readonly Html[];
  id?: string;
  className?: string;
}

export function dataTable(table: DataTable): Html {
  return html`<div class="scroll" tabindex="0" role="region" aria-label="${table.label}">
    <table${table.id ? html` id="${table.id}"` : ''}${table.className ? html` class="${table.className}"` : ''}>
      <caption>
        ${table.caption}
      </caption>
      <thead>
        <tr>
          ${table.columns.map((column) => html`<th scope="col">${column}</th>`)}
        </tr>
      </thead>
      <tbody>
        ${table.rows}
      </tbody>
    </table>
  </div>`;
}
