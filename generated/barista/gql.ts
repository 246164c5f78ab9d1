/* eslint-disable */
import * as types from './graphql.ts';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "query BaristaQueue {\n  orders(status: [PREPARING, BREWING]) {\n    id\n    status\n    timeOrdered\n    notes\n    total\n    items {\n      coffee {\n        name\n      }\n      quantity\n      specialInstructions\n    }\n    customer {\n      name\n    }\n    barista {\n      name\n    }\n  }\n}\n\nquery Preparing {\n  orders(status: PREPARING) {\n    id\n  }\n}\n\nquery OneOrder($id: ID!) {\n  order(id: $id) {\n    id\n    status\n    total\n    items {\n      quantity\n      coffee {\n        name\n      }\n    }\n  }\n}\n\nmutation Advance($id: ID!, $status: OrderStatus!) {\n  updateOrderStatus(id: $id, status: $status) {\n    id\n    status\n    barista {\n      name\n    }\n  }\n}\n\nquery Stock {\n  lowStockItems {\n    ingredient {\n      name\n    }\n    currentStock\n    alertLevel\n  }\n}": typeof types.BaristaQueueDocument,
    "mutation Login($email: String!, $password: String!) {\n  login(email: $email, password: $password) {\n    ...Session\n  }\n}\n\nmutation Register($email: String!, $password: String!, $name: String!) {\n  register(email: $email, password: $password, name: $name) {\n    ...Session\n  }\n}\n\nmutation RefreshToken($token: String!) {\n  refreshToken(token: $token) {\n    ...Session\n  }\n}\n\nmutation Logout($refreshToken: String!) {\n  logout(refreshToken: $refreshToken)\n}\n\nmutation ChangePassword($oldPassword: String!, $newPassword: String!) {\n  changePassword(oldPassword: $oldPassword, newPassword: $newPassword)\n}\n\nfragment Session on AuthPayload {\n  token\n  role\n  expiresAt\n  refreshToken\n}": typeof types.LoginDocument,
    "subscription QueueLive {\n  orderQueueChanged {\n    id\n    status\n    timeOrdered\n    paidAt\n    notes\n    total\n    items {\n      coffee {\n        name\n      }\n      quantity\n      specialInstructions\n    }\n    customer {\n      name\n    }\n    barista {\n      name\n    }\n  }\n}\n\nsubscription StoreQueueLive($storeId: ID!) {\n  orderQueueChanged(storeId: $storeId) {\n    id\n    status\n    timeOrdered\n    paidAt\n    notes\n    total\n    items {\n      coffee {\n        name\n      }\n      quantity\n      specialInstructions\n    }\n    customer {\n      name\n    }\n    barista {\n      name\n    }\n  }\n}\n\nquery StoreStock($storeId: ID!) {\n  lowStockItems(storeId: $storeId) {\n    ingredient {\n      name\n    }\n    currentStock\n    alertLevel\n  }\n}": typeof types.QueueLiveDocument,
    "subscription Notifications {\n  notificationAdded {\n    id\n    kind\n    message\n    orderId\n    createdAt\n  }\n}\n\nquery NotificationList {\n  customer {\n    notificationList(first: 50) {\n      nodes {\n        id\n        kind\n        message\n        orderId\n        createdAt\n      }\n    }\n  }\n}": typeof types.NotificationsDocument,
    "query Ping {\n  __typename\n}": typeof types.PingDocument,
};
const documents: Documents = {
    "query BaristaQueue {\n  orders(status: [PREPARING, BREWING]) {\n    id\n    status\n    timeOrdered\n    notes\n    total\n    items {\n      coffee {\n        name\n      }\n      quantity\n      specialInstructions\n    }\n    customer {\n      name\n    }\n    barista {\n      name\n    }\n  }\n}\n\nquery Preparing {\n  orders(status: PREPARING) {\n    id\n  }\n}\n\nquery OneOrder($id: ID!) {\n  order(id: $id) {\n    id\n    status\n    total\n    items {\n      quantity\n      coffee {\n        name\n      }\n    }\n  }\n}\n\nmutation Advance($id: ID!, $status: OrderStatus!) {\n  updateOrderStatus(id: $id, status: $status) {\n    id\n    status\n    barista {\n      name\n    }\n  }\n}\n\nquery Stock {\n  lowStockItems {\n    ingredient {\n      name\n    }\n    currentStock\n    alertLevel\n  }\n}": types.BaristaQueueDocument,
    "mutation Login($email: String!, $password: String!) {\n  login(email: $email, password: $password) {\n    ...Session\n  }\n}\n\nmutation Register($email: String!, $password: String!, $name: String!) {\n  register(email: $email, password: $password, name: $name) {\n    ...Session\n  }\n}\n\nmutation RefreshToken($token: String!) {\n  refreshToken(token: $token) {\n    ...Session\n  }\n}\n\nmutation Logout($refreshToken: String!) {\n  logout(refreshToken: $refreshToken)\n}\n\nmutation ChangePassword($oldPassword: String!, $newPassword: String!) {\n  changePassword(oldPassword: $oldPassword, newPassword: $newPassword)\n}\n\nfragment Session on AuthPayload {\n  token\n  role\n  expiresAt\n  refreshToken\n}": types.LoginDocument,
    "subscription QueueLive {\n  orderQueueChanged {\n    id\n    status\n    timeOrdered\n    paidAt\n    notes\n    total\n    items {\n      coffee {\n        name\n      }\n      quantity\n      specialInstructions\n    }\n    customer {\n      name\n    }\n    barista {\n      name\n    }\n  }\n}\n\nsubscription StoreQueueLive($storeId: ID!) {\n  orderQueueChanged(storeId: $storeId) {\n    id\n    status\n    timeOrdered\n    paidAt\n    notes\n    total\n    items {\n      coffee {\n        name\n      }\n      quantity\n      specialInstructions\n    }\n    customer {\n      name\n    }\n    barista {\n      name\n    }\n  }\n}\n\nquery StoreStock($storeId: ID!) {\n  lowStockItems(storeId: $storeId) {\n    ingredient {\n      name\n    }\n    currentStock\n    alertLevel\n  }\n}": types.QueueLiveDocument,
    "subscription Notifications {\n  notificationAdded {\n    id\n    kind\n    message\n    orderId\n    createdAt\n  }\n}\n\nquery NotificationList {\n  customer {\n    notificationList(first: 50) {\n      nodes {\n        id\n        kind\n        message\n        orderId\n        createdAt\n      }\n    }\n  }\n}": types.NotificationsDocument,
    "query Ping {\n  __typename\n}": types.PingDocument,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query BaristaQueue {\n  orders(status: [PREPARING, BREWING]) {\n    id\n    status\n    timeOrdered\n    notes\n    total\n    items {\n      coffee {\n        name\n      }\n      quantity\n      specialInstructions\n    }\n    customer {\n      name\n    }\n    barista {\n      name\n    }\n  }\n}\n\nquery Preparing {\n  orders(status: PREPARING) {\n    id\n  }\n}\n\nquery OneOrder($id: ID!) {\n  order(id: $id) {\n    id\n    status\n    total\n    items {\n      quantity\n      coffee {\n        name\n      }\n    }\n  }\n}\n\nmutation Advance($id: ID!, $status: OrderStatus!) {\n  updateOrderStatus(id: $id, status: $status) {\n    id\n    status\n    barista {\n      name\n    }\n  }\n}\n\nquery Stock {\n  lowStockItems {\n    ingredient {\n      name\n    }\n    currentStock\n    alertLevel\n  }\n}"): (typeof documents)["query BaristaQueue {\n  orders(status: [PREPARING, BREWING]) {\n    id\n    status\n    timeOrdered\n    notes\n    total\n    items {\n      coffee {\n        name\n      }\n      quantity\n      specialInstructions\n    }\n    customer {\n      name\n    }\n    barista {\n      name\n    }\n  }\n}\n\nquery Preparing {\n  orders(status: PREPARING) {\n    id\n  }\n}\n\nquery OneOrder($id: ID!) {\n  order(id: $id) {\n    id\n    status\n    total\n    items {\n      quantity\n      coffee {\n        name\n      }\n    }\n  }\n}\n\nmutation Advance($id: ID!, $status: OrderStatus!) {\n  updateOrderStatus(id: $id, status: $status) {\n    id\n    status\n    barista {\n      name\n    }\n  }\n}\n\nquery Stock {\n  lowStockItems {\n    ingredient {\n      name\n    }\n    currentStock\n    alertLevel\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation Login($email: String!, $password: String!) {\n  login(email: $email, password: $password) {\n    ...Session\n  }\n}\n\nmutation Register($email: String!, $password: String!, $name: String!) {\n  register(email: $email, password: $password, name: $name) {\n    ...Session\n  }\n}\n\nmutation RefreshToken($token: String!) {\n  refreshToken(token: $token) {\n    ...Session\n  }\n}\n\nmutation Logout($refreshToken: String!) {\n  logout(refreshToken: $refreshToken)\n}\n\nmutation ChangePassword($oldPassword: String!, $newPassword: String!) {\n  changePassword(oldPassword: $oldPassword, newPassword: $newPassword)\n}\n\nfragment Session on AuthPayload {\n  token\n  role\n  expiresAt\n  refreshToken\n}"): (typeof documents)["mutation Login($email: String!, $password: String!) {\n  login(email: $email, password: $password) {\n    ...Session\n  }\n}\n\nmutation Register($email: String!, $password: String!, $name: String!) {\n  register(email: $email, password: $password, name: $name) {\n    ...Session\n  }\n}\n\nmutation RefreshToken($token: String!) {\n  refreshToken(token: $token) {\n    ...Session\n  }\n}\n\nmutation Logout($refreshToken: String!) {\n  logout(refreshToken: $refreshToken)\n}\n\nmutation ChangePassword($oldPassword: String!, $newPassword: String!) {\n  changePassword(oldPassword: $oldPassword, newPassword: $newPassword)\n}\n\nfragment Session on AuthPayload {\n  token\n  role\n  expiresAt\n  refreshToken\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "subscription QueueLive {\n  orderQueueChanged {\n    id\n    status\n    timeOrdered\n    paidAt\n    notes\n    total\n    items {\n      coffee {\n        name\n      }\n      quantity\n      specialInstructions\n    }\n    customer {\n      name\n    }\n    barista {\n      name\n    }\n  }\n}\n\nsubscription StoreQueueLive($storeId: ID!) {\n  orderQueueChanged(storeId: $storeId) {\n    id\n    status\n    timeOrdered\n    paidAt\n    notes\n    total\n    items {\n      coffee {\n        name\n      }\n      quantity\n      specialInstructions\n    }\n    customer {\n      name\n    }\n    barista {\n      name\n    }\n  }\n}\n\nquery StoreStock($storeId: ID!) {\n  lowStockItems(storeId: $storeId) {\n    ingredient {\n      name\n    }\n    currentStock\n    alertLevel\n  }\n}"): (typeof documents)["subscription QueueLive {\n  orderQueueChanged {\n    id\n    status\n    timeOrdered\n    paidAt\n    notes\n    total\n    items {\n      coffee {\n        name\n      }\n      quantity\n      specialInstructions\n    }\n    customer {\n      name\n    }\n    barista {\n      name\n    }\n  }\n}\n\nsubscription StoreQueueLive($storeId: ID!) {\n  orderQueueChanged(storeId: $storeId) {\n    id\n    status\n    timeOrdered\n    paidAt\n    notes\n    total\n    items {\n      coffee {\n        name\n      }\n      quantity\n      specialInstructions\n    }\n    customer {\n      name\n    }\n    barista {\n      name\n    }\n  }\n}\n\nquery StoreStock($storeId: ID!) {\n  lowStockItems(storeId: $storeId) {\n    ingredient {\n      name\n    }\n    currentStock\n    alertLevel\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "subscription Notifications {\n  notificationAdded {\n    id\n    kind\n    message\n    orderId\n    createdAt\n  }\n}\n\nquery NotificationList {\n  customer {\n    notificationList(first: 50) {\n      nodes {\n        id\n        kind\n        message\n        orderId\n        createdAt\n      }\n    }\n  }\n}"): (typeof documents)["subscription Notifications {\n  notificationAdded {\n    id\n    kind\n    message\n    orderId\n    createdAt\n  }\n}\n\nquery NotificationList {\n  customer {\n    notificationList(first: 50) {\n      nodes {\n        id\n        kind\n        message\n        orderId\n        createdAt\n      }\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "query Ping {\n  __typename\n}"): (typeof documents)["query Ping {\n  __typename\n}"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;