"""The app's frame, apart from the pages: the page list and navigation (router), what the server
does when it starts (startup), the loading card in every page's HTML (boot_screen), and the
one-at-a-time import of a page's modules (page_imports). It imports no page module by name."""
