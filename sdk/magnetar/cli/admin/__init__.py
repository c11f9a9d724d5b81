"""``magnetar admin``: pulsar-admin's verbs and flags over the service's ``/admin/v2`` routes
(the reference: docs/admin-cli.md).

    magnetar admin [--service-url URL] [--auth-plugin P] [--auth-params X] KIND VERB ...
    magnetar admin clusters list
    magnetar admin tenants list|get|create|update|delete ... (admin.tenancy)
    magnetar admin namespaces list|create|delete|topics|permissions|... (admin.tenancy)
    magnetar admin namespaces policies|get-retention|set-retention|... (admin.namespaces)
    magnetar admin namespaces get-backlog-quotas|set-backlog-quota|...|set-subscribe-rate T/NS
                          (admin.quotas)
    magnetar admin topics permissions|grant-permission|revoke-permission ... (admin.tenancy)
    magnetar admin topics list|create|delete|stats|compact|... (admin.topic_lifecycle)
    magnetar admin topics subscriptions|skip|peek-messages|... (admin.topics)
    magnetar admin topics terminate|unload|truncate|... (admin.topic_ops)

Changes print nothing, as pulsar-admin; reads print a table for people (lists one name a
line) or JSON for scripts with ``-o json`` (``magnetar.cli.admin.output``). A tenant created
without ``--allowed-clusters`` gets every cluster of the service. Exit status 1 when the
service refuses (``error: <Pulsar's error name>: <its reason>`` on stderr) or the verb
failed; 2 for a usage error (a malformed name, time or size: nothing is sent). The service
URL is found as for ``magnetar produce`` (``--service-url`` or pulsar-admin's
``--admin-url``, ``$MAGNETAR_SERVICE_URL``, the running ``magnetar local``,
``http://127.0.0.1:8080``), the token too (``magnetar.cli.admin.auth``).

The command itself (its parser, the global options, sending, printing, exit statuses) is
``admin.command``; the clusters, tenants, namespaces and permissions verbs are
``admin.tenancy``; each other family of verbs is a module of this package.
"""
