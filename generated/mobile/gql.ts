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
    "query MobileHome {\n  customer {\n    name\n    points\n    recentOrders(limit: 3) {\n      id\n      total\n      status\n    }\n    profile {\n      username\n      avatar\n    }\n  }\n  featured: coffees(category: FEATURED) {\n    id\n    name\n    price\n  }\n}\n\nquery CoffeeDetail($id: ID!) {\n  coffee(id: $id) {\n    id\n    name\n    price\n    roast\n    description\n    category\n    ingredients {\n      name\n      organic\n      allergens\n    }\n    roaster {\n      name\n      location\n      sustainabilityRating\n    }\n    reviews(limit: 3) {\n      rating\n      comment\n    }\n  }\n}\n\nquery Search($q: String!) {\n  searchCoffees(query: $q) {\n    id\n    name\n    price\n  }\n}\n\nquery SearchByName {\n  searchCoffees(name: \"latte\") {\n    id\n    name\n  }\n}\n\nmutation PlaceOrder($input: CreateOrderInput!) {\n  createOrder(input: $input) {\n    id\n    total\n    status\n    estimatedReadyTime\n    items {\n      coffee {\n        name\n      }\n      quantity\n      specialInstructions\n    }\n  }\n}\n\nmutation CancelMine($id: ID!) {\n  cancelOrder(id: $id)\n}\n\nmutation UpdateProfile($input: ProfileInput!) {\n  updateCustomerProfile(input: $input) {\n    name\n    profile {\n      username\n      avatar\n    }\n  }\n}\n\nsubscription TrackOrder($id: ID!) {\n  orderUpdated(id: $id) {\n    id\n    status\n    estimatedReadyTime\n    barista {\n      name\n    }\n  }\n}\n\nsubscription StatusFeed($orderId: ID!) {\n  orderStatusChanged(orderId: $orderId) {\n    status\n    message\n    barista {\n      name\n    }\n  }\n}": typeof types.MobileHomeDocument,
    "mutation Login($email: String!, $password: String!) {\n  login(email: $email, password: $password) {\n    ...Session\n  }\n}\n\nmutation Register($email: String!, $password: String!, $name: String!) {\n  register(email: $email, password: $password, name: $name) {\n    ...Session\n  }\n}\n\nmutation RefreshToken($token: String!) {\n  refreshToken(token: $token) {\n    ...Session\n  }\n}\n\nmutation Logout($refreshToken: String!) {\n  logout(refreshToken: $refreshToken)\n}\n\nmutation ChangePassword($oldPassword: String!, $newPassword: String!) {\n  changePassword(oldPassword: $oldPassword, newPassword: $newPassword)\n}\n\nfragment Session on AuthPayload {\n  token\n  role\n  expiresAt\n  refreshToken\n}": typeof types.LoginDocument,
    "mutation StartPayment($orderId: ID!) {\n  startPayment(orderId: $orderId) {\n    clientSecret\n    paymentIntentId\n    amount\n    currency\n  }\n}": typeof types.StartPaymentDocument,
    "subscription Notifications {\n  notificationAdded {\n    id\n    kind\n    message\n    orderId\n    createdAt\n  }\n}\n\nquery NotificationList {\n  customer {\n    notificationList(first: 50) {\n      nodes {\n        id\n        kind\n        message\n        orderId\n        createdAt\n      }\n    }\n  }\n}": typeof types.NotificationsDocument,
    "query Ping {\n  __typename\n}": typeof types.PingDocument,
};
const documents: Documents = {
    "query MobileHome {\n  customer {\n    name\n    points\n    recentOrders(limit: 3) {\n      id\n      total\n      status\n    }\n    profile {\n      username\n      avatar\n    }\n  }\n  featured: coffees(category: FEATURED) {\n    id\n    name\n    price\n  }\n}\n\nquery CoffeeDetail($id: ID!) {\n  coffee(id: $id) {\n    id\n    name\n    price\n    roast\n    description\n    category\n    ingredients {\n      name\n      organic\n      allergens\n    }\n    roaster {\n      name\n      location\n      sustainabilityRating\n    }\n    reviews(limit: 3) {\n      rating\n      comment\n    }\n  }\n}\n\nquery Search($q: String!) {\n  searchCoffees(query: $q) {\n    id\n    name\n    price\n  }\n}\n\nquery SearchByName {\n  searchCoffees(name: \"latte\") {\n    id\n    name\n  }\n}\n\nmutation PlaceOrder($input: CreateOrderInput!) {\n  createOrder(input: $input) {\n    id\n    total\n    status\n    estimatedReadyTime\n    items {\n      coffee {\n        name\n      }\n      quantity\n      specialInstructions\n    }\n  }\n}\n\nmutation CancelMine($id: ID!) {\n  cancelOrder(id: $id)\n}\n\nmutation UpdateProfile($input: ProfileInput!) {\n  updateCustomerProfile(input: $input) {\n    name\n    profile {\n      username\n      avatar\n    }\n  }\n}\n\nsubscription TrackOrder($id: ID!) {\n  orderUpdated(id: $id) {\n    id\n    status\n    estimatedReadyTime\n    barista {\n      name\n    }\n  }\n}\n\nsubscription StatusFeed($orderId: ID!) {\n  orderStatusChanged(orderId: $orderId) {\n    status\n    message\n    barista {\n      name\n    }\n  }\n}": types.MobileHomeDocument,
    "mutation Login($email: String!, $password: String!) {\n  login(email: $email, password: $password) {\n    ...Session\n  }\n}\n\nmutation Register($email: String!, $password: String!, $name: String!) {\n  register(email: $email, password: $password, name: $name) {\n    ...Session\n  }\n}\n\nmutation RefreshToken($token: String!) {\n  refreshToken(token: $token) {\n    ...Session\n  }\n}\n\nmutation Logout($refreshToken: String!) {\n  logout(refreshToken: $refreshToken)\n}\n\nmutation ChangePassword($oldPassword: String!, $newPassword: String!) {\n  changePassword(oldPassword: $oldPassword, newPassword: $newPassword)\n}\n\nfragment Session on AuthPayload {\n  token\n  role\n  expiresAt\n  refreshToken\n}": types.LoginDocument,
    "mutation StartPayment($orderId: ID!) {\n  startPayment(orderId: $orderId) {\n    clientSecret\n    paymentIntentId\n    amount\n    currency\n  }\n}": types.StartPaymentDocument,
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
export function graphql(source: "query MobileHome {\n  customer {\n    name\n    points\n    recentOrders(limit: 3) {\n      id\n      total\n      status\n    }\n    profile {\n      username\n      avatar\n    }\n  }\n  featured: coffees(category: FEATURED) {\n    id\n    name\n    price\n  }\n}\n\nquery CoffeeDetail($id: ID!) {\n  coffee(id: $id) {\n    id\n    name\n    price\n    roast\n    description\n    category\n    ingredients {\n      name\n      organic\n      allergens\n    }\n    roaster {\n      name\n      location\n      sustainabilityRating\n    }\n    reviews(limit: 3) {\n      rating\n      comment\n    }\n  }\n}\n\nquery Search($q: String!) {\n  searchCoffees(query: $q) {\n    id\n    name\n    price\n  }\n}\n\nquery SearchByName {\n  searchCoffees(name: \"latte\") {\n    id\n    name\n  }\n}\n\nmutation PlaceOrder($input: CreateOrderInput!) {\n  createOrder(input: $input) {\n    id\n    total\n    status\n    estimatedReadyTime\n    items {\n      coffee {\n        name\n      }\n      quantity\n      specialInstructions\n    }\n  }\n}\n\nmutation CancelMine($id: ID!) {\n  cancelOrder(id: $id)\n}\n\nmutation UpdateProfile($input: ProfileInput!) {\n  updateCustomerProfile(input: $input) {\n    name\n    profile {\n      username\n      avatar\n    }\n  }\n}\n\nsubscription TrackOrder($id: ID!) {\n  orderUpdated(id: $id) {\n    id\n    status\n    estimatedReadyTime\n    barista {\n      name\n    }\n  }\n}\n\nsubscription StatusFeed($orderId: ID!) {\n  orderStatusChanged(orderId: $orderId) {\n    status\n    message\n    barista {\n      name\n    }\n  }\n}"): (typeof documents)["query MobileHome {\n  customer {\n    name\n    points\n    recentOrders(limit: 3) {\n      id\n      total\n      status\n    }\n    profile {\n      username\n      avatar\n    }\n  }\n  featured: coffees(category: FEATURED) {\n    id\n    name\n    price\n  }\n}\n\nquery CoffeeDetail($id: ID!) {\n  coffee(id: $id) {\n    id\n    name\n    price\n    roast\n    description\n    category\n    ingredients {\n      name\n      organic\n      allergens\n    }\n    roaster {\n      name\n      location\n      sustainabilityRating\n    }\n    reviews(limit: 3) {\n      rating\n      comment\n    }\n  }\n}\n\nquery Search($q: String!) {\n  searchCoffees(query: $q) {\n    id\n    name\n    price\n  }\n}\n\nquery SearchByName {\n  searchCoffees(name: \"latte\") {\n    id\n    name\n  }\n}\n\nmutation PlaceOrder($input: CreateOrderInput!) {\n  createOrder(input: $input) {\n    id\n    total\n    status\n    estimatedReadyTime\n    items {\n      coffee {\n        name\n      }\n      quantity\n      specialInstructions\n    }\n  }\n}\n\nmutation CancelMine($id: ID!) {\n  cancelOrder(id: $id)\n}\n\nmutation UpdateProfile($input: ProfileInput!) {\n  updateCustomerProfile(input: $input) {\n    name\n    profile {\n      username\n      avatar\n    }\n  }\n}\n\nsubscription TrackOrder($id: ID!) {\n  orderUpdated(id: $id) {\n    id\n    status\n    estimatedReadyTime\n    barista {\n      name\n    }\n  }\n}\n\nsubscription StatusFeed($orderId: ID!) {\n  orderStatusChanged(orderId: $orderId) {\n    status\n    message\n    barista {\n      name\n    }\n  }\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation Login($email: String!, $password: String!) {\n  login(email: $email, password: $password) {\n    ...Session\n  }\n}\n\nmutation Register($email: String!, $password: String!, $name: String!) {\n  register(email: $email, password: $password, name: $name) {\n    ...Session\n  }\n}\n\nmutation RefreshToken($token: String!) {\n  refreshToken(token: $token) {\n    ...Session\n  }\n}\n\nmutation Logout($refreshToken: String!) {\n  logout(refreshToken: $refreshToken)\n}\n\nmutation ChangePassword($oldPassword: String!, $newPassword: String!) {\n  changePassword(oldPassword: $oldPassword, newPassword: $newPassword)\n}\n\nfragment Session on AuthPayload {\n  token\n  role\n  expiresAt\n  refreshToken\n}"): (typeof documents)["mutation Login($email: String!, $password: String!) {\n  login(email: $email, password: $password) {\n    ...Session\n  }\n}\n\nmutation Register($email: String!, $password: String!, $name: String!) {\n  register(email: $email, password: $password, name: $name) {\n    ...Session\n  }\n}\n\nmutation RefreshToken($token: String!) {\n  refreshToken(token: $token) {\n    ...Session\n  }\n}\n\nmutation Logout($refreshToken: String!) {\n  logout(refreshToken: $refreshToken)\n}\n\nmutation ChangePassword($oldPassword: String!, $newPassword: String!) {\n  changePassword(oldPassword: $oldPassword, newPassword: $newPassword)\n}\n\nfragment Session on AuthPayload {\n  token\n  role\n  expiresAt\n  refreshToken\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation StartPayment($orderId: ID!) {\n  startPayment(orderId: $orderId) {\n    clientSecret\n    paymentIntentId\n    amount\n    currency\n  }\n}"): (typeof documents)["mutation StartPayment($orderId: ID!) {\n  startPayment(orderId: $orderId) {\n    clientSecret\n    paymentIntentId\n    amount\n    currency\n  }\n}"];
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