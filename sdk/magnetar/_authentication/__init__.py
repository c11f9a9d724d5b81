"""Authentication's internals: the parameter strings the providers take (``params``) and the OAuth 2.0 client-credentials grant (``oauth2``)."""
