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
    "query KioskMenu {\n  menuItems {\n    id\n    name\n    price\n    imageUrl\n    category\n    limitedTimeOffer\n    inventory\n  }\n  featuredCoffee {\n    ...CoffeeCard\n  }\n  seasonalDrinks {\n    ...CoffeeCard\n    seasonalIngredients {\n      name\n      organic\n      allergens\n    }\n  }\n}\n\nquery FeaturedList {\n  coffees(category: FEATURED) {\n    id\n    name\n    price\n    roast\n  }\n}\n\nfragment CoffeeCard on Coffee {\n  id\n  name\n  price\n  description\n  imageUrl\n  roast\n}": typeof types.KioskMenuDocument,
    "mutation Login($email: String!, $password: String!) {\n  login(email: $email, password: $password) {\n    ...Session\n  }\n}\n\nmutation Register($email: String!, $password: String!, $name: String!) {\n  register(email: $email, password: $password, name: $name) {\n    ...Session\n  }\n}\n\nmutation RefreshToken($token: String!) {\n  refreshToken(token: $token) {\n    ...Session\n  }\n}\n\nmutation Logout($refreshToken: String!) {\n  logout(refreshToken: $refreshToken)\n}\n\nmutation ChangePassword($oldPassword: String!, $newPassword: String!) {\n  changePassword(oldPassword: $oldPassword, newPassword: $newPassword)\n}\n\nfragment Session on AuthPayload {\n  token\n  role\n  expiresAt\n  refreshToken\n}": typeof types.LoginDocument,
    "subscription Notifications {\n  notificationAdded {\n    id\n    kind\n    message\n    orderId\n    createdAt\n  }\n}\n\nquery NotificationList {\n  customer {\n    notificationList(first: 50) {\n      nodes {\n        id\n        kind\n        message\n        orderId\n        createdAt\n      }\n    }\n  }\n}": typeof types.NotificationsDocument,
    "query Ping {\n  __typename\n}": typeof types.PingDocument,
};
const documents: Documents = {
    "query KioskMenu {\n  menuItems {\n    id\n    name\n    price\n    imageUrl\n    category\n    limitedTimeOffer\n    inventory\n  }\n  featuredCoffee {\n    ...CoffeeCard\n  }\n  seasonalDrinks {\n    ...CoffeeCard\n    seasonalIngredients {\n      name\n      organic\n      allergens\n    }\n  }\n}\n\nquery FeaturedList {\n  coffees(category: FEATURED) {\n    id\n    name\n    price\n    roast\n  }\n}\n\nfragment CoffeeCard on Coffee {\n  id\n  name\n  price\n  description\n  imageUrl\n  roast\n}": types.KioskMenuDocument,
    "mutation Login($email: String!, $password: String!) {\n  login(email: $email, password: $password) {\n    ...Session\n  }\n}\n\nmutation Register($email: String!, $password: String!, $name: String!) {\n  register(email: $email, password: $password, name: $name) {\n    ...Session\n  }\n}\n\nmutation RefreshToken($token: String!) {\n  refreshToken(token: $token) {\n    ...Session\n  }\n}\n\nmutation Logout($refreshToken: String!) {\n  logout(refreshToken: $refreshToken)\n}\n\nmutation ChangePassword($oldPassword: String!, $newPassword: String!) {\n  changePassword(oldPassword: $oldPassword, newPassword: $newPassword)\n}\n\nfragment Session on AuthPayload {\n  token\n  role\n  expiresAt\n  refreshToken\n}": types.LoginDocument,
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
export function graphql(source: "query KioskMenu {\n  menuItems {\n    id\n    name\n    price\n    imageUrl\n    category\n    limitedTimeOffer\n    inventory\n  }\n  featuredCoffee {\n    ...CoffeeCard\n  }\n  seasonalDrinks {\n    ...CoffeeCard\n    seasonalIngredients {\n      name\n      organic\n      allergens\n    }\n  }\n}\n\nquery FeaturedList {\n  coffees(category: FEATURED) {\n    id\n    name\n    price\n    roast\n  }\n}\n\nfragment CoffeeCard on Coffee {\n  id\n  name\n  price\n  description\n  imageUrl\n  roast\n}"): (typeof documents)["query KioskMenu {\n  menuItems {\n    id\n    name\n    price\n    imageUrl\n    category\n    limitedTimeOffer\n    inventory\n  }\n  featuredCoffee {\n    ...CoffeeCard\n  }\n  seasonalDrinks {\n    ...CoffeeCard\n    seasonalIngredients {\n      name\n      organic\n      allergens\n    }\n  }\n}\n\nquery FeaturedList {\n  coffees(category: FEATURED) {\n    id\n    name\n    price\n    roast\n  }\n}\n\nfragment CoffeeCard on Coffee {\n  id\n  name\n  price\n  description\n  imageUrl\n  roast\n}"];
/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "mutation Login($email: String!, $password: String!) {\n  login(email: $email, password: $password) {\n    ...Session\n  }\n}\n\nmutation Register($email: String!, $password: String!, $name: String!) {\n  register(email: $email, password: $password, name: $name) {\n    ...Session\n  }\n}\n\nmutation RefreshToken($token: String!) {\n  refreshToken(token: $token) {\n    ...Session\n  }\n}\n\nmutation Logout($refreshToken: String!) {\n  logout(refreshToken: $refreshToken)\n}\n\nmutation ChangePassword($oldPassword: String!, $newPassword: String!) {\n  changePassword(oldPassword: $oldPassword, newPassword: $newPassword)\n}\n\nfragment Session on AuthPayload {\n  token\n  role\n  expiresAt\n  refreshToken\n}"): (typeof documents)["mutation Login($email: String!, $password: String!) {\n  login(email: $email, password: $password) {\n    ...Session\n  }\n}\n\nmutation Register($email: String!, $password: String!, $name: String!) {\n  register(email: $email, password: $password, name: $name) {\n    ...Session\n  }\n}\n\nmutation RefreshToken($token: String!) {\n  refreshToken(token: $token) {\n    ...Session\n  }\n}\n\nmutation Logout($refreshToken: String!) {\n  logout(refreshToken: $refreshToken)\n}\n\nmutation ChangePassword($oldPassword: String!, $newPassword: String!) {\n  changePassword(oldPassword: $oldPassword, newPassword: $newPassword)\n}\n\nfragment Session on AuthPayload {\n  token\n  role\n  expiresAt\n  refreshToken\n}"];
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