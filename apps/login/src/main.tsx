/**
 * @module login/main
 * Entry point: reads the gateway's config from `#app` and renders the page there.
 */
import { render } from 'preact';
import { App } from './app.tsx';
import { createApi } from './api.ts';
import { readConfig } from './config.ts';
import './style.css';

const root = document.getElementById('app');
if (root) {
  const config = readConfig(root);
  root.textContent = '';
  render(<App api={createApi(config.basePath)} config={config} />, root);
}
