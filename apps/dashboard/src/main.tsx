/**
 * @module dashboard/main
 * Entry point: reads the gateway's config from `#app` and renders the console there.
 *
 * React Aria's buttons and checkboxes add, once, an inline `<style id="react-aria-pressable-style">`
 * to the head (a `touch-action` rule for their `data-react-aria-pressable` attribute), which the
 * console's CSP (`style-src 'self'`, gateway/src/dashboard.ts) refuses. It adds none when an element
 * with that id is there: this marker is, and style.css holds the rule.
 */
import { render } from 'preact';
import { App } from './app.tsx';
import { readConfig } from './config.ts';
import './style.css';

const pressableStyle = document.createElement('meta');
pressableStyle.id = 'react-aria-pressable-style';
document.head.append(pressableStyle);

const root = document.getElementById('app');
if (root) {
  const config = readConfig(root);
  root.textContent = '';
  render(<App config={config} />, root);
}
