"""One module per API resource; each class is an attribute of the client (``api.cards``…) and
calls through the client's :class:`~kit._requestor.Requestor`, never the client itself.

The client builds each on first use (:class:`~kit._resources._base.Lazy`): a module here is
imported only by a client that uses its resource."""
