/**
 * @module dashboard/main
 * Entry point: reads the gateway's config from `#app` and renders the console there.
 */
import { render } from 'preact';
import { App } from './app.tsx';
import { readConfig } from './config.ts';
import './style.css';

const root = document.getElementById('app');
if (root) {
  const config = readConfig(root);
  root.textContent = '';
  render(<App config={config} />, root);
}
