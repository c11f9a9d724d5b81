"""The console's static page (``index.html``, ``console.js``, ``console.css``): package
data of the Lambda layer, served by ``magnetar_core.api.console``."""
